# The photos the benches read, sourced from the repository root by the scripts that need some.
# PHOTOS_DIR names a folder of JPEGs; the default, samples/photos, is the six small sample photos
# committed in this repository, so every bench runs out of the box. The figures in docs/decisions/
# were measured on a larger set of 39 photos (flower.jpg, a ~30 KB thumbnail; china.jpg;
# the mate_*.jpg; dune_canon_1680x1050.jpg; elephants_5640x3172_progressive.jpg, 16 MB; the
# orientation/ set; …): to reproduce them, point PHOTOS_DIR at such a folder. A script that wants
# one of those files by name takes it when PHOTOS_DIR has it, and otherwise the smallest or the
# largest JPEG there.
photos_dir="${PHOTOS_DIR:-samples/photos}"
[ -d "$photos_dir" ] || { echo "bench: PHOTOS_DIR $photos_dir is not a folder" >&2; exit 1; }

# bench_photo NAME smallest|largest: $photos_dir/NAME when it exists, else the smallest (or the
# largest) JPEG directly in $photos_dir.
bench_photo() {
  if [ -f "$photos_dir/$1" ]; then
    echo "$photos_dir/$1"
    return
  fi
  local order=-n
  [ "$2" = largest ] && order=-rn
  find "$photos_dir" -maxdepth 1 \( -iname '*.jpg' -o -iname '*.jpeg' \) -printf '%s %p\n' \
    | sort $order | head -n1 | cut -d' ' -f2-
}
