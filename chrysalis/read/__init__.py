"""The read side: every query of the store in read transactions, decoded into models (`reader`,
and `graph` for nodes, edges, persona and skills)."""
