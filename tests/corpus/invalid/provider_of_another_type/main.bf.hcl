resource "t" "x" {
  provider = aws
}
