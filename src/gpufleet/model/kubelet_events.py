"""The kubelet's container and image Events, word for word, and the pull policy that picks them.

Mirrors k8s.io/kubernetes v1.34.10:

- ``pkg/kubelet/kuberuntime/kuberuntime_container.go`` ``startContainer``, on every container start (a
  restart's too): the image (``EnsureImageExists``), then Normal ``Created`` "Created container: NAME",
  then Normal ``Started`` "Started container NAME"; ``killContainer``: Normal ``Killing`` "Stopping
  container NAME";
- ``pkg/kubelet/images/image_manager.go`` ``EnsureImageExists``: under ``IfNotPresent`` or ``Never``, an
  image on the node records Normal ``Pulled`` "Container image "IMAGE" already present on machine" (the
  image as the container names it; ``KubeletEnsureSecretPulledImages``, alpha and off in 1.34, would say
  "... and can be accessed by the pod"); otherwise ``pullImage`` records Normal ``Pulling`` "Pulling image
  "IMAGE"" and, once pulled, Normal ``Pulled`` "Successfully pulled image "IMAGE" in D (W including
  waiting). Image size: N bytes." (the image with its default tag, ``applyDefaultImageTag``; D the pull's
  own time, W the time since ``Pulling``, in the queue of the serial puller included, both Go
  ``time.Duration`` strings truncated to the millisecond);
- ``pkg/apis/core/v1/defaults.go`` ``SetDefaults_Container``: no ``imagePullPolicy`` is ``Always`` for
  an image whose tag is ``latest`` (``parsers.ParseImageName``: no tag and no digest reads as
  ``latest``), else ``IfNotPresent``.
"""

from __future__ import annotations

import json
import math

from gpufleet.model.quantity import go_duration

ALWAYS, IF_NOT_PRESENT, NEVER = "Always", "IfNotPresent", "Never"
PULL_POLICIES = (ALWAYS, IF_NOT_PRESENT, NEVER)


def pull_policy(image: str, given: str = "") -> str:
    """The container's ``imagePullPolicy``: ``given``, else ``SetDefaults_Container``'s for ``image``."""
    if given:
        return given
    name = image.split("@", 1)[0]
    tagged = name.rfind(":") > name.rfind("/")
    digested = "@" in image
    tag = name.rsplit(":", 1)[1] if tagged else ("" if digested else "latest")
    return ALWAYS if tag == "latest" else IF_NOT_PRESENT


def _to_millisecond(seconds: float) -> float:
    """``Duration.Truncate(time.Millisecond)`` (a float's rounding error below a millisecond forgiven)."""
    return math.floor(seconds * 1000 + 1e-6) / 1000


def pulling_message(image: str) -> str:
    return f"Pulling image {json.dumps(image)}"


def pulled_message(image: str, pull_s: float, waited_s: float, size_bytes: int) -> str:
    """``pullImage``'s Pulled message: the pull's own time, then the time since Pulling."""
    took, waited = go_duration(_to_millisecond(pull_s)), go_duration(_to_millisecond(waited_s))
    return (
        f"Successfully pulled image {json.dumps(image)} in {took} ({waited} including waiting). "
        f"Image size: {size_bytes} bytes."
    )


def present_message(image: str) -> str:
    """``EnsureImageExists``' Pulled message for an image on the node, named as its container names it."""
    return f"Container image {json.dumps(image)} already present on machine"


def created_message(container: str) -> str:
    return f"Created container: {container}"


def started_message(container: str) -> str:
    return f"Started container {container}"


def killing_message(container: str) -> str:
    return f"Stopping container {container}"
