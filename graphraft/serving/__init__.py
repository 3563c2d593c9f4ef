"""GraphRAFT as a service: the HTTP API that `graphraft serve` runs."""
