brickform {
  required_versoin = ">= 0.1"
}
