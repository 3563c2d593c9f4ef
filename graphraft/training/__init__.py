"""Training L1 (question -> Cypher) and L2 (answer selection): configs, example building,
shared-prefix batches, target choice and the trainer."""
