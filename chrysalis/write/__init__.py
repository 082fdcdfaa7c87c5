"""The write side: every verb that changes the memory as ops in one write transaction (`writer`,
`knowledge`), the rule that applies each op kind to the views (`op_rules`), and what erasing a
bead's content does to them (`erase`)."""
