"""Which ResourceClaims a pod uses (kube-scheduler's DynamicResources PreFilter, Kubernetes 1.34):
claims named by the pod, and one claim stamped from each ResourceClaimTemplate it names."""

from __future__ import annotations

from collections.abc import Mapping

from gpufleet.model.dra import PodResourceClaim, ResourceClaim, ResourceClaimTemplate


def claims_for_pod(
    namespace: str,
    pod_name: str,
    pod_claims: tuple[PodResourceClaim, ...],
    claims: Mapping[str, ResourceClaim],
    templates: Mapping[str, ResourceClaimTemplate],
) -> tuple[ResourceClaim, ...] | str:
    """The claims a pod uses: named claims looked up by ``namespace/name``, one claim per template.

    Returns a reason when one is missing; kube-scheduler's DynamicResources PreFilter then says
    ``resourceclaim "<name>" not found`` (UnschedulableAndUnresolvable) and waits.

    A template's claim that exists already (``<pod>-<podClaimName>``, standing for the claim the pod's
    ``status.resourceClaimStatuses`` names) is used whether or not the template still exists: the
    scheduler never reads templates (``foreachPodResourceClaim`` looks up the claim ``resourceclaim.Name``
    finds in the pod's status).
    """
    out = []
    for pod_claim in pod_claims:
        if pod_claim.resource_claim_name:
            claim = claims.get(f"{namespace}/{pod_claim.resource_claim_name}")
            if claim is None:
                return f'resourceclaim "{pod_claim.resource_claim_name}" not found'
            out.append(claim)
        elif pod_claim.resource_claim_template_name:
            existing = claims.get(f"{namespace}/{pod_name}-{pod_claim.name}")
            if existing is not None:  # the claim the pod's status names: the template is not read again
                out.append(existing)
                continue
            template = templates.get(f"{namespace}/{pod_claim.resource_claim_template_name}")
            if template is None:
                return f'resourceclaimtemplate "{pod_claim.resource_claim_template_name}" not found'
            out.append(template.claim_for(pod_name, pod_claim.name))
    return tuple(out)


def pod_claim_keys(namespace: str, pod_name: str, pod_claims: tuple[PodResourceClaim, ...]) -> set[str]:
    """The keys (``namespace/name``) of the claims a pod uses: each named claim, and for a template
    the pod's own claim, ``<pod>-<podClaimName>`` (:meth:`ResourceClaimTemplate.claim_for`)."""
    return {
        f"{namespace}/{c.resource_claim_name or f'{pod_name}-{c.name}'}"
        for c in pod_claims
        if c.resource_claim_name or c.resource_claim_template_name
    }
