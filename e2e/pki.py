"""Per-run credentials of the test control plane: a CA, the API server's serving certificate, the
service-account signing key, static bearer tokens and one kubeconfig per identity.

Made fresh for every start and kept on tmpfs beside etcd's data; valid for loopback only
(``127.0.0.1``, ``localhost`` and the ``kubernetes`` Service's names). Each component talks to the
API server as the user upstream's bootstrap RBAC expects (``system:kube-scheduler``,
``system:kube-controller-manager``); tests and kwok use an administrator in ``system:masters``.
"""

from __future__ import annotations

import datetime
import ipaddress
import secrets
from dataclasses import dataclass
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

#: identity -> (user name, groups) in the token file
IDENTITIES = {
    "admin": ("gpufleet-admin", "system:masters"),
    "scheduler": ("system:kube-scheduler", ""),
    "controller-manager": ("system:kube-controller-manager", ""),
}


@dataclass(frozen=True)
class Credentials:
    ca_cert: Path
    serving_cert: Path
    serving_key: Path
    sa_key: Path
    sa_pub: Path
    token_file: Path
    tokens: dict[str, str]  # identity -> bearer token

    def kubeconfig(self, identity: str, server: str, path: Path) -> Path:
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "gpufleet-e2e",
                    "cluster": {"server": server, "certificate-authority": str(self.ca_cert)},
                }
            ],
            "users": [{"name": identity, "user": {"token": self.tokens[identity]}}],
            "contexts": [{"name": "gpufleet-e2e", "context": {"cluster": "gpufleet-e2e", "user": identity}}],
            "current-context": "gpufleet-e2e",
        }
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        return path


def _key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _write_key(key: rsa.RSAPrivateKey, path: Path) -> None:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
    )
    path.chmod(0o600)


def _certificate(
    subject: str, key: rsa.RSAPrivateKey, issuer: x509.Certificate | None, issuer_key: rsa.RSAPrivateKey
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer.subject if issuer is not None else name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=7))
    )
    if issuer is None:
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
    else:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                    x509.IPAddress(ipaddress.ip_address("10.0.0.1")),
                    x509.DNSName("localhost"),
                    x509.DNSName("kubernetes.default.svc"),
                ]
            ),
            critical=False,
        )
    return builder.sign(issuer_key, hashes.SHA256())


def make_credentials(directory: Path) -> Credentials:
    directory.mkdir(parents=True, exist_ok=True)
    ca_key = _key()
    ca = _certificate("gpufleet-e2e-ca", ca_key, None, ca_key)
    serving_key = _key()
    serving = _certificate("kube-apiserver", serving_key, ca, ca_key)
    sa_key = _key()
    paths = {
        name: directory / name for name in ("ca.crt", "apiserver.crt", "apiserver.key", "sa.key", "sa.pub")
    }
    paths["ca.crt"].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths["apiserver.crt"].write_bytes(serving.public_bytes(serialization.Encoding.PEM))
    _write_key(serving_key, paths["apiserver.key"])
    _write_key(sa_key, paths["sa.key"])
    paths["sa.pub"].write_bytes(
        sa_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    tokens = {identity: secrets.token_hex(16) for identity in IDENTITIES}
    token_file = directory / "tokens.csv"
    token_file.write_text(
        "".join(
            f'{tokens[i]},{user},{user},"{groups}"\n' if groups else f"{tokens[i]},{user},{user}\n"
            for i, (user, groups) in IDENTITIES.items()
        )
    )
    token_file.chmod(0o600)
    return Credentials(
        paths["ca.crt"],
        paths["apiserver.crt"],
        paths["apiserver.key"],
        paths["sa.key"],
        paths["sa.pub"],
        token_file,
        tokens,
    )
