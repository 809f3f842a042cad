moved {
  from = test_thing.a
}
