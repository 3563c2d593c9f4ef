"""GraphRAFT: retrieval-augmented fine-tuning for knowledge graphs on graph databases."""

__version__ = "0.1.0"
