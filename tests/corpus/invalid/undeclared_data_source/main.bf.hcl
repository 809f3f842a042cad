locals {
  user = data.test_info.me.user
}
