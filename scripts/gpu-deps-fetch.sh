#!/usr/bin/env bash
# For a GPU machine without a package registry (the project's lent one: CUDA, CMake and a Python
# with PyTorch, nothing else). Run here, in the project root, on a Debian 12 machine with apt:
# downloads the Debian packages such a machine lacks into .devdeps/ (git-ignored, ~17 MB), which a
# device run carries and unpacks with `source scripts/gpu-deps-env.sh` (docs/core.md, "Checking on
# a GPU").
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .devdeps/fallback
cd .devdeps
[ -n "$(ls /var/lib/apt/lists/ 2>/dev/null | grep -v lock)" ] || apt-get update -qq
quiet() { grep -v unsandboxed || true; }  # apt's note on downloading as root
# MuJoCo (its CMake config asks for OpenGL), HDF5, yaml-cpp, GoogleTest, CLI11, JSON, zlib, and
# the headers fetch/ builds against (libcurl, OpenSSL; their libraries are the fallbacks below).
apt-get download -qq \
  libmujoco2.2.2 libmujoco-dev libccd2 liblodepng0 libqhull-r8.0 libqhull-dev libtinyxml2-9 libtinyxml2-dev \
  libgl-dev libglx-dev libopengl-dev libgl1 libglx0 libopengl0 libglvnd0 \
  libhdf5-103-1 libhdf5-cpp-103-1 libhdf5-hl-100 libhdf5-hl-cpp-100 libhdf5-dev libsz2 libaec0 libaec-dev hdf5-helpers \
  libyaml-cpp0.7 libyaml-cpp-dev libgtest-dev googletest libcli11-dev nlohmann-json3-dev zlib1g zlib1g-dev \
  libcurl4-openssl-dev libssl-dev \
  2>&1 | quiet
# Fallbacks, unpacked only for a library the GPU machine lacks: HDF5 links libcurl and libcrypto
# (its ROS3 driver), and those bring their own closure. The H200 of 2026-11-26 had them all.
(cd fallback && apt-get download -qq libcurl4 libssl3 libbrotli1 libcom-err2 libdb5.3 libffi8 \
  libgmp10 libgnutls30 libgssapi-krb5-2 libhogweed6 libidn2-0 libk5crypto3 libkeyutils1 libkrb5-3 \
  libkrb5support0 libldap-2.5-0 libnettle8 libnghttp2-14 libp11-kit0 libpsl5 librtmp1 libsasl2-2 \
  libsasl2-modules-db libssh2-1 libtasn1-6 libunistring2 2>&1 | quiet)
echo "gpu-deps-fetch: $(ls ./*.deb | wc -l) packages (+ $(ls fallback/*.deb | wc -l) fallbacks), $(du -sh . | cut -f1) in .devdeps/"
