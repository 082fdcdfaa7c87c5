"""Long-running reliability tests: real daemons, a real S3 API, crashes and outages."""
