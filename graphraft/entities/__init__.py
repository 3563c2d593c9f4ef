"""Entity extraction (L0) and resolution of mentions to node ids."""
