"""The store: one LMDB environment and its single writer (`env`), its layout (`keys`), the op log
(`oplog`), the data dir's identity (`datadir`), blobs beside it and durable file writes."""
