"""The viewer's page parts; ``vendor/`` holds force-graph (see scripts/refresh-viewer-assets.sh)."""
