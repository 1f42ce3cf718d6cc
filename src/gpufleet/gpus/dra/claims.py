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
    """
    out = []
    for pod_claim in pod_claims:
        if pod_claim.resource_claim_name:
            claim = claims.get(f"{namespace}/{pod_claim.resource_claim_name}")
            if claim is None:
                return f'resourceclaim "{pod_claim.resource_claim_name}" not found'
            out.append(claim)
        elif pod_claim.resource_claim_template_name:
            template = templates.get(f"{namespace}/{pod_claim.resource_claim_template_name}")
            if template is None:
                return f'resourceclaimtemplate "{pod_claim.resource_claim_template_name}" not found'
            existing = claims.get(f"{namespace}/{pod_name}-{pod_claim.name}")
            out.append(existing or template.claim_for(pod_name, pod_claim.name))
    return tuple(out)
