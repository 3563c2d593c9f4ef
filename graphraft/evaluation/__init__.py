"""Evaluation: metrics, the runner that scores GraphRAFT and its baselines, and the report."""
