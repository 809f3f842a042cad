provider "tset" {}
