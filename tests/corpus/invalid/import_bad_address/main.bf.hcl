import {
  to = "test_thing.a"
  id = "123"
}
