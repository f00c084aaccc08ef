# The container image and the DaemonSet (deploy/README.md).  Included by the
# Makefile.
#   make image        the collector image, with podman, offline (deploy/image.sh)
#   make test-deploy  the image run under runc as deploy/daemonset.yaml says,
#                     scraped by Prometheus (tests/integration/test_deploy.sh;
#                     `make integration` and `make test` run it too)
# What they need is in the Makefile's DEB_PKGS (podman, buildah, runc,
# debootstrap, prometheus, curl, jq, nodejs); the Kubernetes schema (npm
# kubernetes-models) is installed by the test into $(OUTPUT)/npm.

.PHONY: image test-deploy
image:
	$(Q)OUTPUT=$(OUTPUT) deploy/image.sh

test-deploy: all $(PPROF)
	$(Q)PPROF=$(abspath $(PPROF)) OUTPUT=$(OUTPUT) tests/run.sh deploy tests/integration/test_deploy.sh
