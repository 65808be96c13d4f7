# syntax=docker/dockerfile:1
# token-broker container image.
#
#   docker build -t token-broker .
#   docker run --env-file .env -p 8080:8080 -v broker-data:/data token-broker
#
# Two stages: compile with the Swift toolchain the project is tested with
# (6.3.1 on Debian bookworm), then copy the one binary into debian:bookworm-slim
# with only what it loads at run time. scripts/container-check checks this file
# and runs the binary the way this image does; docs/deployment.md explains
# the variables, the volume and the probes.

# ---- build ---------------------------------------------------------------------
FROM swift:6.3.1-bookworm AS build

# The toolchain alone builds it: token-broker links no FoundationNetworking (so no
# libcurl), and its TLS client finds OpenSSL with dlopen at run time (no headers).
WORKDIR /src
# The manifest names every target, test targets too, so Tests/ must be present
# for SwiftPM to load the package even though only the executable is built.
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
RUN swift build -c release --static-swift-stdlib --product token-broker \
 && mkdir -p /staging \
 && cp "$(swift build -c release --static-swift-stdlib --show-bin-path)/token-broker" /staging/token-broker \
 && cp /usr/libexec/swift/linux/swift-backtrace-static /staging/swift-backtrace-static

# ---- run -----------------------------------------------------------------------
FROM debian:bookworm-slim AS run

# libssl3: the broker's own TLS client loads libssl.so.3 and libcrypto.so.3 with
# dlopen at run time (ldd does not list them). ca-certificates: the system's trust
# store, against which providers' and webhook receivers' certificates are checked.
# libc6, libstdc++6 and libgcc-s1, the binary's other shared libraries, are in the
# base image already. No curl or shell tools are
# added: the health check is the binary itself.
# The user has a fixed numeric id so orchestrators can check runAsNonRoot and
# volumes can be prepared for it; /data is created before VOLUME so a new named
# volume starts out owned by it with mode 0700.
RUN export DEBIAN_FRONTEND=noninteractive \
 && apt-get -q update \
 && apt-get -q install -y --no-install-recommends libssl3 ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 broker \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin broker \
 && install -d -o 10001 -g 10001 -m 0700 /data

COPY --from=build /staging/token-broker /usr/local/bin/token-broker
COPY --from=build /staging/swift-backtrace-static /usr/local/libexec/swift-backtrace-static

# Listen on every interface inside the container, keep data in the volume, log
# one JSON object per line. A crash prints a symbolicated backtrace (the static
# binary needs the static backtracer's path spelled out).
ENV BROKER_HOST=0.0.0.0 \
    BROKER_PORT=8080 \
    BROKER_DATA_DIR=/data \
    BROKER_LOG_FORMAT=json \
    SWIFT_BACKTRACE=enable=yes,sanitize=yes,threads=all,images=all,interactive=no,swift-backtrace=/usr/local/libexec/swift-backtrace-static

VOLUME /data
EXPOSE 8080
USER 10001:10001

# The binary is PID 1 (exec form, no shell, no init): it handles SIGTERM itself,
# turns readiness to 503, drains, and exits 0 within BROKER_SHUTDOWN_GRACE
# (default 10 s). Give it longer than that before SIGKILL (docker stop -t 15,
# compose stop_grace_period, Kubernetes terminationGracePeriodSeconds).
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=2s --start-period=5s --retries=3 \
    CMD ["token-broker", "healthcheck"]
ENTRYPOINT ["token-broker"]
CMD ["serve"]
