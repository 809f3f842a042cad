brickform {
  required_version = 1
}
