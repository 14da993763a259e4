# label: hazard raises
# why: HaloPadding.backward slices grad_output into views and apply_grad_halo accumulates the neighbour halo gradients into those views with narrow(...).add_(), mutating the engine's grad_output; for a `.sum()` loss grad_output is an expanded stride-0 tensor and the in-place add raises.
# source: https://github.com/NVIDIA/physicsnemo/commit/9e2394a8b37b1ac3944371e452910e7fde59dbd1
from dataclasses import dataclass

import torch
import torch.nn as nn

torch.manual_seed(0)


@dataclass
class HaloConfig:
    mesh_dim: int
    tensor_dim: int
    halo_size: int
    edge_padding_size: int = 0
    communication_method: str = "a2a"


class LoopbackMesh:
    """Single-process stand-in for a 1D DeviceMesh where every rank holds identical data (periodic domain)."""

    def __init__(self, local_rank=1, size=3):
        self.local_rank = local_rank
        self.size = size

    def get_local_rank(self, mesh_dim):
        return self.local_rank

    def world_size(self, mesh_dim):
        return self.size


def perform_halo_collective(mesh, mesh_dim, halo_to_left, halo_to_right, communication_method):
    # what my left neighbour sends right equals what I send right (identical ranks), and vice versa
    return halo_to_right.clone(), halo_to_left.clone()


def halo_padding_fwd_primitive(local_tensor, mesh, halo_config):
    d, h = halo_config.tensor_dim, halo_config.halo_size
    n = local_tensor.shape[d]
    halo_to_left = local_tensor.narrow(d, 0, h)
    halo_to_right = local_tensor.narrow(d, n - h, h)
    halo_from_left, halo_from_right = perform_halo_collective(
        mesh, halo_config.mesh_dim, halo_to_left.contiguous(), halo_to_right.contiguous(),
        halo_config.communication_method)
    return torch.cat([halo_from_left, local_tensor, halo_from_right], dim=d)


def slice_halo_regions(local_tensor, mesh, halo_config):
    local_rank = mesh.get_local_rank(halo_config.mesh_dim)
    local_size = mesh.world_size(halo_config.mesh_dim)
    dim_shape = local_tensor.shape[halo_config.tensor_dim]
    start = halo_config.halo_size if local_rank != 0 else halo_config.edge_padding_size
    end = dim_shape - halo_config.halo_size if local_rank != local_size - 1 else dim_shape - halo_config.edge_padding_size
    left_slice, central_slice, right_slice = torch.tensor_split(local_tensor, [start, end], dim=halo_config.tensor_dim)
    return left_slice, central_slice, right_slice


def apply_grad_halo(mesh, halo_config, grad_input, halo_from_left, halo_from_right):
    local_rank = mesh.get_local_rank(halo_config.mesh_dim)
    local_size = mesh.world_size(halo_config.mesh_dim)
    # Apply right halo gradient
    if local_rank != local_size - 1:
        start_idx = grad_input.shape[halo_config.tensor_dim] - halo_from_right.shape[halo_config.tensor_dim]
        length = halo_from_right.shape[halo_config.tensor_dim]
        grad_input.narrow(halo_config.tensor_dim, start_idx, length).add_(halo_from_right)  # <-- IPL005
    # Apply left halo gradient
    if local_rank != 0:
        length = halo_from_left.shape[halo_config.tensor_dim]
        grad_input.narrow(halo_config.tensor_dim, 0, length).add_(halo_from_left)  # <-- IPL005
    return grad_input


def halo_padding_bwd_primitive(grad_output, mesh, halo_config):
    grad_to_left, local_grad, grad_to_right = slice_halo_regions(grad_output, mesh, halo_config)
    # Exchange halos between ranks
    grad_from_left, grad_from_right = perform_halo_collective(
        mesh, halo_config.mesh_dim, grad_to_left.contiguous(), grad_to_right.contiguous(),
        halo_config.communication_method)
    # Apply halo gradients
    return apply_grad_halo(mesh, halo_config, local_grad, grad_from_left, grad_from_right)


class HaloPadding(torch.autograd.Function):
    @staticmethod
    def forward(tensor, mesh, config):
        return halo_padding_fwd_primitive(tensor, mesh, config)

    @staticmethod
    def setup_context(ctx, inputs, output):
        _tensor, mesh, config = inputs
        ctx.mesh = mesh
        ctx.config = config

    @staticmethod
    def backward(ctx, grad_output):
        grad_input = halo_padding_bwd_primitive(grad_output, ctx.mesh, ctx.config)
        return grad_input, None, None


def main():
    mesh = LoopbackMesh()
    config = HaloConfig(mesh_dim=0, tensor_dim=2, halo_size=1)
    lift = nn.Conv1d(2, 4, kernel_size=1)

    x = torch.randn(1, 2, 8)
    h = lift(x)
    padded = HaloPadding.apply(h, mesh, config)
    # mass-conservation style objective: total of the halo-padded field
    loss = padded.sum()
    loss.backward()
    return loss.detach(), lift.weight.grad


loss, lift_grad = main()
