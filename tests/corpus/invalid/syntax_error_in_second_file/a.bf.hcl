locals { ok = 1 }
