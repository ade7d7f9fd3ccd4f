"""Records into the graph: markdown files with YAML frontmatter, read deterministically
(RECORDS.md). Nothing here runs an LLM, and nothing here imports ``proposals``."""
