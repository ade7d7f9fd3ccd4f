#!/usr/bin/env bash
# Refresh the graph-rendering libraries shipped inside the package (src/ontoloom/viewer/vendor/).
#
# `ontoloom view` inlines force-graph's built UMD file (the 2D canvas drawing) into every HTML
# file it writes; files written with --3d and the pages of `serve --ui` also carry d3-force-3d
# and the five small d3 modules it needs (the 3D layout, run in a Web Worker; the 3D picture is
# ontoloom's own WebGL2 code, viewer/drawing3d.js), so a file works offline and users install
# nothing but ontoloom. This script is the only way the vendored files change: it fetches each
# pinned version from the npm registry with `npm pack`, copies its built file and licence, for
# a build that bundles its dependencies (force-graph) collects their licences too (installed
# with --ignore-scripts, only to read their LICENSE files), and records the versions and
# SHA-256s in vendor/ASSETS.json. To move to a new version: change the pin below, run it, run
# `pytest tests/test_view.py tests/test_view_browser.py` and `make test-browser`, commit the
# vendor/ folder.
set -euo pipefail

# package@version  built file in the package  file in vendor/  bundles its dependencies?
# (the d3 modules are UMD files that each define their part of the global `d3`: their
# dependencies are the pins above them, in this order)
PINS=(
  "force-graph@1.52.0     dist/force-graph.min.js     force-graph.min.js     bundles"
  "d3-dispatch@3.0.2      dist/d3-dispatch.min.js     d3-dispatch.min.js     alone"
  "d3-timer@3.0.2         dist/d3-timer.min.js        d3-timer.min.js        alone"
  "d3-quadtree@3.0.2      dist/d3-quadtree.min.js     d3-quadtree.min.js     alone"
  "d3-binarytree@1.0.2    dist/d3-binarytree.min.js   d3-binarytree.min.js   alone"
  "d3-octree@1.1.0        dist/d3-octree.min.js       d3-octree.min.js       alone"
  "d3-force-3d@3.0.8      dist/d3-force-3d.min.js     d3-force-3d.min.js     alone"
)

here="$(cd "$(dirname "$0")/.." && pwd)"
vendor="$here/src/ontoloom/viewer/vendor"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$vendor"

licences="$work/THIRD_PARTY_LICENSES.txt"
entries=()
for pin in "${PINS[@]}"; do
  read -r spec built file bundles <<<"$pin"
  package="${spec%@*}"
  version="${spec##*@}"
  dir="$work/$package"
  mkdir -p "$dir"
  (
    cd "$dir"
    tarball="$(npm pack --silent "$package@$version")"
    tar xzf "$tarball"
    if [ "$bundles" = bundles ]; then
      npm install --silent --no-save --ignore-scripts --no-audit --no-fund "$package@$version" >/dev/null
    fi
  )
  cp "$dir/package/$built" "$vendor/$file"
  cp "$dir/package/LICENSE" "$vendor/$package.LICENSE"
  licence="$(node -p "require('$dir/package/package.json').license || ''")"
  [ "$bundles" = bundles ] && {
    echo "Licences of the packages bundled into $file ($package@$version),"
    echo "as installed from the npm registry by scripts/refresh-viewer-assets.sh."
    for sub in "$dir"/node_modules/* "$dir"/node_modules/@*/*; do
      [ -f "$sub/package.json" ] || continue
      name="$(node -p "require('$sub/package.json').name")"
      subversion="$(node -p "require('$sub/package.json').version")"
      sublicence="$(node -p "require('$sub/package.json').license || ''")"
      echo
      echo "================================================================================"
      echo "$name@$subversion ($sublicence)"
      echo "================================================================================"
      found="$(ls "$sub" | grep -iE '^(licen[cs]e|copying)' | head -1 || true)"
      if [ -n "$found" ]; then cat "$sub/$found"; else echo "(no licence file in the package; package.json says: $sublicence)"; fi
    done
    echo
    echo
  } >> "$licences"
  [ "$bundles" = bundles ] || {
    echo "$file is $package@$version alone ($licence; its licence: $package.LICENSE)."
    echo
  } >> "$licences"
  sha="$(sha256sum "$vendor/$file" | cut -d' ' -f1)"
  entries+=("    {\"package\": \"$package\", \"version\": \"$version\", \"file\": \"$file\", \"sha256\": \"$sha\", \"license\": \"$licence\", \"license_file\": \"$package.LICENSE\"}")
  echo "vendored $package@$version into $vendor (sha256 $sha)"
done
cp "$licences" "$vendor/THIRD_PARTY_LICENSES.txt"

{
  echo "{"
  echo '  "refreshed_by": "scripts/refresh-viewer-assets.sh",'
  echo '  "third_party_licenses": "THIRD_PARTY_LICENSES.txt",'
  echo '  "assets": ['
  last=$((${#entries[@]} - 1))
  for i in "${!entries[@]}"; do
    if [ "$i" -lt "$last" ]; then echo "${entries[$i]},"; else echo "${entries[$i]}"; fi
  done
  echo "  ]"
  echo "}"
} > "$vendor/ASSETS.json"
