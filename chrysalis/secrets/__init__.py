"""Credentials in incoming text: where they are (`spans`, `shapes`) and how a write redacts or
refuses them (`scan`). Pure: no I/O."""
