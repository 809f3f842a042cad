variable x y {
}
