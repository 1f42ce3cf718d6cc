"""Container images as kube-scheduler's ImageLocality names them.

``normalized_image_name`` mirrors ``imagelocality.normalizedImageName`` (Kubernetes 1.34): a
reference without a tag (no ``:`` after the last ``/``) gets ``:latest``; a tagged or digested
reference is kept as written. A node's images (``status.images``: every name of an image, with its
``sizeBytes``) are kept by name, as the scheduler's snapshot indexes them (``createImageExistenceMap``).
"""

from __future__ import annotations


def normalized_image_name(name: str) -> str:
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name
