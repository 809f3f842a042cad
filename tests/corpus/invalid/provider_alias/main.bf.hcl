resource "t" "x" {
  provider = t.prod
}
