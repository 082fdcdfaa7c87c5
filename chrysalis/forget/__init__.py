"""Forget beyond the write transaction: beads chosen by a selector (`select`), the local scrub that
leaves no copy in any file of the data dir (`scrub`), and the receipt of where the text went
(`receipt`)."""
