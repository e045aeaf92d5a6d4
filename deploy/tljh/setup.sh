#!/usr/bin/env bash
# Prepare a The Littlest JupyterHub (TLJH) server for a pavlovlab workshop.
#
# Run it as root on the TLJH machine, from a checkout of the release the class will use:
#     git clone --depth 1 --branch main https://github.com/pavlovlab/pavlovlab /opt/pavlovlab-src
#     sudo bash /opt/pavlovlab-src/deploy/tljh/setup.sh
# Settings (environment variables, defaults in brackets; see deploy/README.md for the sizing behind them):
#     MEM_LIMIT [2G]      per-learner memory ceiling (tljh-config limits.memory)
#     CPU_LIMIT [1]       per-learner CPU ceiling in cores (tljh-config limits.cpu)
#     CULL_TIMEOUT [7200] seconds of inactivity before a server is stopped (TLJH's default is 600)
#     ADMINS []           comma-separated admin user names (tljh-config users.admin), e.g. ADMINS=alice,bob
#     AUTH [firstuse]     firstuse: each learner picks a user name and sets a password at the first login (TLJH's
#                         FirstUseAuthenticator, no accounts to create); keep: leave TLJH's authenticator alone
#     HTTPS_DOMAIN []     the hub's DNS name: with HTTPS_EMAIL, turns on TLJH's built-in Let's Encrypt HTTPS
#     HTTPS_EMAIL []      the contact address Let's Encrypt sends expiry notices to
#     DRY_RUN [0]         1: print the commands without running them
#
# What it does:
#  1. installs the course's pinned kernel requirements (binder/requirements.txt, CPU-only torch),
#     nbgitpuller and the pavlovlab package of this checkout into the USER environment /opt/tljh/user;
#     the hub's own environment /opt/tljh/hub is left alone;
#  2. caps every learner's kernel to one thread (jupyterhub_config.d/pavlovlab.py);
#  3. sets the memory and CPU limits and a workshop-long idle cull;
#  4. logins (the first-use authenticator, the admins) and HTTPS when asked, then reloads the hub and proxy.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRC="$(cd "$HERE/../.." && pwd)"
USER_ENV="${USER_ENV:-/opt/tljh/user}"
TLJH_CONFIG_D="${TLJH_CONFIG_D:-/opt/tljh/config/jupyterhub_config.d}"
MEM_LIMIT="${MEM_LIMIT:-2G}"
CPU_LIMIT="${CPU_LIMIT:-1}"
CULL_TIMEOUT="${CULL_TIMEOUT:-7200}"
NBGITPULLER="nbgitpuller==1.3.0"
ADMINS="${ADMINS:-}"
AUTH="${AUTH:-firstuse}"
HTTPS_DOMAIN="${HTTPS_DOMAIN:-}"
HTTPS_EMAIL="${HTTPS_EMAIL:-}"
DRY_RUN="${DRY_RUN:-0}"

run() { echo "+ $*"; if [ "$DRY_RUN" != 1 ]; then "$@"; fi; }

if [ ! -f "$SRC/binder/requirements.txt" ] || [ ! -f "$SRC/pyproject.toml" ]; then
    echo "setup.sh: run it from a pavlovlab checkout (no binder/requirements.txt under $SRC)" >&2
    exit 1
fi
case "$AUTH" in firstuse|keep) ;; *) echo "setup.sh: AUTH must be firstuse or keep, got '$AUTH'" >&2; exit 1;; esac
if { [ -n "$HTTPS_DOMAIN" ] && [ -z "$HTTPS_EMAIL" ]; } || { [ -z "$HTTPS_DOMAIN" ] && [ -n "$HTTPS_EMAIL" ]; }; then
    echo "setup.sh: HTTPS needs both HTTPS_DOMAIN and HTTPS_EMAIL (got '$HTTPS_DOMAIN' and '$HTTPS_EMAIL')" >&2
    exit 1
fi
if [ "$DRY_RUN" != 1 ]; then
    if [ ! -x "$USER_ENV/bin/python" ]; then
        echo "setup.sh: no TLJH user environment at $USER_ENV: install TLJH first (tljh.jupyter.org)" >&2
        exit 1
    fi
    # numpy 2.4 and the rest of the pins need Python >= 3.11 in the user environment, which keeps the Python of
    # the TLJH release that first created it.
    if ! "$USER_ENV/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
        echo "setup.sh: $USER_ENV has $("$USER_ENV/bin/python" -V 2>&1); the course needs Python >= 3.11." >&2
        echo "          A fresh install of TLJH 2.0.0b1 or later creates the user environment with Python 3.12;" >&2
        echo "          TLJH 1.x created it with 3.10, and upgrading TLJH keeps the Python it has. Install" >&2
        echo "          TLJH >= 2.0.0b1 on a fresh VM (deploy/README.md, step 1); do not upgrade Python in place." >&2
        exit 1
    fi
fi
release="$(git -C "$SRC" describe --tags --exact-match 2>/dev/null || echo "an untagged commit")"
echo "pavlovlab checkout at $SRC: $release"

# 1. Kernel requirements + nbgitpuller + the package, into the user environment only.
run "$USER_ENV/bin/python" -m pip install --no-cache-dir -r "$SRC/binder/requirements.txt" "$NBGITPULLER"
run "$USER_ENV/bin/python" -m pip install --no-cache-dir --no-deps "$SRC"
run "$USER_ENV/bin/jupyter" server extension enable --sys-prefix nbgitpuller

# 2. One thread per learner, JupyterLab by default, patient spawns.
run install -D -m 644 "$HERE/jupyterhub_config.d/pavlovlab.py" "$TLJH_CONFIG_D/pavlovlab.py"

# 3. Limits and the idle cull; reload.
run tljh-config set limits.memory "$MEM_LIMIT"
run tljh-config set limits.cpu "$CPU_LIMIT"
run tljh-config set services.cull.timeout "$CULL_TIMEOUT"
run tljh-config set user_environment.default_app jupyterlab

# 4. Logins: learners create their own account at the first login (user name + password of their choice;
#    a forgotten password is reset by an admin from the hub's admin page); admins; HTTPS.
if [ "$AUTH" = firstuse ]; then
    run tljh-config set auth.type firstuseauthenticator.FirstUseAuthenticator
    run tljh-config set auth.FirstUseAuthenticator.create_users true
fi
IFS=',' read -r -a admin_list <<< "$ADMINS"
for admin in "${admin_list[@]}"; do
    [ -n "$admin" ] && run tljh-config add-item users.admin "$admin"
done
if [ -n "$HTTPS_DOMAIN" ]; then  # TLJH's built-in Let's Encrypt support: ports 80 and 443 must be open
    run tljh-config set https.enabled true
    run tljh-config set https.letsencrypt.email "$HTTPS_EMAIL"
    run tljh-config add-item https.letsencrypt.domains "$HTTPS_DOMAIN"
fi
run tljh-config reload hub
run tljh-config reload proxy

echo "Done. Check it as a learner: open a terminal on the hub and run 'pavlovlab doctor' (every line OK)."
