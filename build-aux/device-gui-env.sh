# Sourced on the GPU machine AFTER .devdeps/env.sh (its GLib compiles the schemas):
#   source .devdeps/env.sh && source .devdeps-gui/env.sh
# Unpacks the carried Debian 12 packages (GTK 4 with its -dev closure, Xvfb, xvfb-run,
# xauth, xkbcomp and its data, a font) into /opt/devdeps-gui, never into /, and points
# pkg-config, the compiler, the loader, fontconfig, GSettings, gdk-pixbuf and Xvfb at
# them. build-aux/device-bundle-gui copies this file into .devdeps-gui/.
# SS_DEVDEPS_GUI picks another place (build-aux/device-gui-check-closure uses one here).
_dg=${SS_DEVDEPS_GUI:-/opt/devdeps-gui}
_dg_src=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_dg_lib=$_dg/usr/lib/x86_64-linux-gnu

# Debian's .pc files say /usr, some in prefix= alone, some (freetype2, graphite2,
# libdeflate) in every path: point them all at the unpacked tree.
_dg_fix_pc () {
  local pc
  for pc in "$_dg_lib"/pkgconfig/*.pc "$_dg"/usr/share/pkgconfig/*.pc; do
    [ -f "$pc" ] && sed -i -e "s|=/usr\$|=$_dg/usr|" -e "s|=/usr/|=$_dg/usr/|g" \
      -e "s|-I/usr/|-I$_dg/usr/|g" -e "s|-L/usr/|-L$_dg/usr/|g" "$pc"
  done
}

# Absolute links inside the packages (fontconfig's conf.d -> /usr/share/fontconfig/...)
# would point at the GPU machine's own /: point them into the unpacked tree.
_dg_fix_links () {
  local link target
  while IFS= read -r link; do
    target=$(readlink "$link")
    ln -sfn "$_dg$target" "$link"
  done < <(find "$_dg/etc" "$_dg/usr" -type l -lname '/*')
}

# fontconfig: its own configuration, reading the unpacked fonts (DejaVu) only.
_dg_fonts () {
  local conf=$_dg/etc/fonts/fonts.conf
  sed -i -e "s|<dir>/usr/share/fonts</dir>|<dir>$_dg/usr/share/fonts</dir>|" \
    -e "s|<cachedir>/var/cache/fontconfig</cachedir>|<cachedir>$_dg/var/cache/fontconfig</cachedir>|" \
    -e "s|<include ignore_missing=\"yes\">conf.d</include>|<include ignore_missing=\"yes\">$_dg/etc/fonts/conf.d</include>|" \
    "$conf"
  mkdir -p "$_dg/var/cache/fontconfig"
  FONTCONFIG_FILE=$conf "$_dg/usr/bin/fc-cache" >/dev/null 2>&1 || true
}

# What dpkg's triggers would have made: compiled schemas, the MIME database and
# gdk-pixbuf's loader list.
_dg_caches () {
  glib-compile-schemas "$_dg/usr/share/glib-2.0/schemas"
  "$_dg/usr/bin/update-mime-database" "$_dg/usr/share/mime" >/dev/null 2>&1 || true
  local loaders=$_dg_lib/gdk-pixbuf-2.0/2.10.0
  GDK_PIXBUF_MODULEDIR=$loaders/loaders "$_dg_lib/gdk-pixbuf-2.0/gdk-pixbuf-query-loaders" \
    > "$loaders/loaders.cache"
}

# xvfb-run starts "Xvfb" from PATH. Debian's Xvfb reads its keymaps from
# /usr/share/X11/xkb unless told (-xkbdir); without GLX (-extension GLX) it never looks
# for Mesa, which is not carried (the app renders with cairo, GSK_RENDERER=cairo).
# xvfb-run also wants mcookie (util-linux): a stand-in where it is missing.
_dg_wrappers () {
  mkdir -p "$_dg/wrap"
  cat > "$_dg/wrap/Xvfb" <<EOF
#!/bin/sh
exec $_dg/usr/bin/Xvfb -xkbdir $_dg/usr/share/X11/xkb -extension GLX "\$@"
EOF
  chmod +x "$_dg/wrap/Xvfb"
  if ! command -v mcookie >/dev/null; then
    printf '#!/bin/sh\nod -An -N16 -tx1 /dev/urandom | tr -d " \\n"; echo\n' > "$_dg/wrap/mcookie"
    chmod +x "$_dg/wrap/mcookie"
  fi
}

_dg_unpack () {
  rm -rf "$_dg"
  mkdir -p "$_dg"
  local f
  for f in "$_dg_src"/debs/*.deb; do dpkg -x "$f" "$_dg"; done
  # GTK's CUPS print backend: GTK loads it only to print, and libcups2 is not carried.
  rm -rf "$_dg_lib/gtk-4.0/4.0.0/printbackends"
  _dg_fix_pc
  _dg_fix_links
  _dg_fonts
  _dg_wrappers
}

# Unpacked once per machine, again when the carried list changes.
if ! cmp -s "$_dg_src/packages.txt" "$_dg/.done" 2>/dev/null; then
  _dg_unpack
  _dg_new=1
fi

export PKG_CONFIG_PATH=$_dg_lib/pkgconfig:$_dg/usr/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export LD_LIBRARY_PATH=$_dg_lib:$_dg/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# The wrappers first; the carried programs after the machine's own.
export PATH=$_dg/wrap:$PATH:$_dg/usr/bin
# GTK's data (schemas, MIME database, icons) where GLib looks for it.
export XDG_DATA_DIRS=$_dg/usr/share:${XDG_DATA_DIRS:-/usr/local/share:/usr/share}
export GSETTINGS_SCHEMA_DIR=$_dg/usr/share/glib-2.0/schemas
export FONTCONFIG_FILE=$_dg/etc/fonts/fonts.conf
export FONTCONFIG_PATH=$_dg/etc/fonts
export GDK_PIXBUF_MODULE_FILE=$_dg_lib/gdk-pixbuf-2.0/2.10.0/loaders.cache
# libxkbcommon's keymaps (Xvfb itself gets -xkbdir from its wrapper).
export XKB_CONFIG_ROOT=$_dg/usr/share/X11/xkb

if [ -n "${_dg_new:-}" ]; then
  _dg_caches
  cp "$_dg_src/packages.txt" "$_dg/.done"
fi

# Xvfb runs its keymap compiler as /usr/bin/xkbcomp, a path built into it (there is
# no option for it). Where the machine has none, a link to the carried one: the one
# thing this file puts outside /opt, and only where nothing was.
[ -e /usr/bin/xkbcomp ] || ln -s "$_dg/usr/bin/xkbcomp" /usr/bin/xkbcomp

unset _dg _dg_src _dg_lib _dg_new
unset -f _dg_fix_pc _dg_fix_links _dg_fonts _dg_caches _dg_wrappers _dg_unpack
