#!/usr/bin/env bash
# Refresh the graph-rendering library shipped inside the package (src/ontoloom/viewer/vendor/).
#
# `ontoloom view` inlines force-graph's built UMD file into every HTML file it writes, so the
# file works offline and users install nothing but ontoloom. This script is the only way the
# vendored files change: it fetches the pinned version from the npm registry with `npm pack`,
# copies its built file and licence, collects the licences of everything its build bundles
# (installed with --ignore-scripts, only to read their LICENSE files) and records the version
# and SHA-256 in vendor/ASSETS.json. To move to a new version: change VERSION, run it, run
# `pytest tests/test_view.py`, commit the vendor/ folder.
set -euo pipefail

PACKAGE=force-graph
VERSION=1.52.0

here="$(cd "$(dirname "$0")/.." && pwd)"
vendor="$here/src/ontoloom/viewer/vendor"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cd "$work"
tarball="$(npm pack --silent "$PACKAGE@$VERSION")"
tar xzf "$tarball"
npm install --silent --no-save --ignore-scripts --no-audit --no-fund "$PACKAGE@$VERSION" >/dev/null

mkdir -p "$vendor"
cp package/dist/force-graph.min.js "$vendor/force-graph.min.js"
cp package/LICENSE "$vendor/force-graph.LICENSE"

{
  echo "Licences of the packages bundled into force-graph.min.js ($PACKAGE@$VERSION),"
  echo "as installed from the npm registry by scripts/refresh-viewer-assets.sh."
  for dir in node_modules/* node_modules/@*/*; do
    [ -f "$dir/package.json" ] || continue
    name="$(node -p "require('./$dir/package.json').name")"
    version="$(node -p "require('./$dir/package.json').version")"
    licence="$(node -p "require('./$dir/package.json').license || ''")"
    echo
    echo "================================================================================"
    echo "$name@$version ($licence)"
    echo "================================================================================"
    file="$(ls "$dir" | grep -iE '^(licen[cs]e|copying)' | head -1 || true)"
    if [ -n "$file" ]; then cat "$dir/$file"; else echo "(no licence file in the package; package.json says: $licence)"; fi
  done
} > "$vendor/THIRD_PARTY_LICENSES.txt"

sha="$(sha256sum "$vendor/force-graph.min.js" | cut -d' ' -f1)"
cat > "$vendor/ASSETS.json" <<JSON
{
  "package": "$PACKAGE",
  "version": "$VERSION",
  "file": "force-graph.min.js",
  "sha256": "$sha",
  "license": "MIT",
  "refreshed_by": "scripts/refresh-viewer-assets.sh"
}
JSON
echo "vendored $PACKAGE@$VERSION into $vendor (sha256 $sha)"
