# Sourced by scripts/openapi and scripts/api-contract: makes .build-tools/api-venv with the pinned
# packages of requirements.txt and sets $api_python to its interpreter. Installs python3 and
# python3-venv from Debian when missing; fails (never skips) when something cannot be had.
api_venv=.build-tools/api-venv
api_python=$api_venv/bin/python
api_requirements=scripts/api-contract.d/requirements.txt

name=$api_script
# shellcheck source=lib.sh
. scripts/lib.sh

need python3
# The venv is rebuilt when the pinned list changes, so a stale one never validates with other rules.
stamp=$api_venv/requirements.txt
if [ ! -x "$api_python" ] || ! cmp -s "$api_requirements" "$stamp"; then
  rm -rf "$api_venv"
  if ! python3 -m venv "$api_venv" 2>/dev/null; then
    rm -rf "$api_venv"
    apt_install python3-venv
    python3 -m venv "$api_venv" || die "cannot create the venv $api_venv"
  fi
  echo "$api_script: installing openapi-core, openapi-spec-validator, PyYAML (PyPI) into $api_venv" >&2
  "$api_python" -m pip install -q --disable-pip-version-check -r "$api_requirements" || die "pip could not install $api_requirements"
  cp "$api_requirements" "$stamp"
fi
"$api_python" -c 'import openapi_core, openapi_spec_validator, yaml' || die "openapi-core, openapi-spec-validator or PyYAML does not import"
