removed {
  lifecycle {
    destroy = false
  }
}
