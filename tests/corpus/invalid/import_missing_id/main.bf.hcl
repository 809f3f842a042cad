import {
  to = test_thing.a
}
