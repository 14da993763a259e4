# label: safe
# why: the fixed sg_warp_specular_term normalizes into a new tensor _h instead of h /= ..., and the remaining output *= ... updates act on the freshly computed inner-product result, which nothing saved for backward.
# source: https://github.com/NVIDIAGameWorks/kaolin/commit/18cb66c427672c8c2cd7672b8b58b61f4f4f600c (fix for issue #832)
import math

import torch

torch.manual_seed(0)


def _dot(a, b):
    return torch.sum(a * b, dim=-1, keepdim=True)


def _reflect(direction, normal):
    return direction - 2 * _dot(direction, normal) * normal


def _ggx_v1(m2, nDotX):
    return 1. / (nDotX + torch.sqrt(m2 + (1. - m2) * nDotX * nDotX))


def sg_distribution_term(direction, roughness):
    m2 = roughness * roughness
    sharpness = 2. / m2
    amplitude = (1. / (math.pi * m2)).unsqueeze(-1).expand(-1, 3)
    return amplitude, direction, sharpness


def sg_warp_distribution(amplitude, direction, sharpness, view):
    warp_direction = _reflect(-view, direction)
    warp_sharpness = sharpness / (4. * torch.clamp(_dot(direction, view).squeeze(-1), min=1e-4))
    return amplitude, warp_direction, warp_sharpness


def fresnel(ldh, spec_albedo):
    powTerm = torch.pow((1. - ldh), 5)
    return spec_albedo + (1. - spec_albedo) * powTerm


def unbatched_sg_inner_product(amplitude, direction, sharpness,
                               other_amplitude, other_direction, other_sharpness):
    num_sg = amplitude.shape[0]
    num_other = other_amplitude.shape[0]
    amplitude = amplitude.reshape(num_sg, 1, 3)
    direction = direction.reshape(num_sg, 1, 3)
    sharpness = sharpness.reshape(num_sg, 1, 1)
    other_amplitude = other_amplitude.reshape(1, num_other, 3)
    other_direction = other_direction.reshape(1, num_other, 3)
    other_sharpness = other_sharpness.reshape(1, num_other, 1)
    dm = (sharpness * direction + other_sharpness * other_direction)
    dm = torch.sqrt(_dot(dm, dm))
    lm = sharpness + other_sharpness
    expo = torch.exp(dm - lm) * (amplitude * other_amplitude)
    other = 1.0 - torch.exp(-2.0 * dm)
    return 2.0 * math.pi * expo * other / dm


def unbatched_reduced_sg_inner_product(amplitude, direction, sharpness,
                                       other_amplitude, other_direction, other_sharpness):
    return unbatched_sg_inner_product(amplitude, direction, sharpness,
                                      other_amplitude, other_direction, other_sharpness).sum(1)


def sg_warp_specular_term(amplitude, direction, sharpness, normal, roughness, view, spec_albedo):
    ndf_amplitude, ndf_direction, ndf_sharpness = sg_distribution_term(normal, roughness)
    ndf_amplitude, ndf_direction, ndf_sharpness = sg_warp_distribution(
        ndf_amplitude, ndf_direction, ndf_sharpness, view)
    ndl = torch.clamp(_dot(normal, ndf_direction), min=0., max=1.)
    ndv = torch.clamp(_dot(normal, view), min=0., max=1.)
    h = ndf_direction + view
    _h = h / torch.sqrt(_dot(h, h))
    ldh = torch.clamp(_dot(ndf_direction, _h), min=0., max=1.)

    output = unbatched_reduced_sg_inner_product(
        ndf_amplitude, ndf_direction, ndf_sharpness,
        amplitude, direction, sharpness)
    m2 = (roughness * roughness).unsqueeze(-1)
    output *= _ggx_v1(m2, ndl) * _ggx_v1(m2, ndv)
    output *= fresnel(ldh, spec_albedo)
    output *= ndl
    return torch.clamp(output, min=0.)


def main():
    num_points, num_sg = 6, 3
    normals_texture = torch.nn.Parameter(torch.randn(num_points, 3) * 0.1)
    normal = torch.nn.functional.normalize(normals_texture + torch.tensor([0., 0., 1.]), dim=-1)
    view = torch.nn.functional.normalize(torch.randn(num_points, 3) + torch.tensor([0., 0., 2.]), dim=-1)
    roughness = torch.nn.Parameter(torch.full((num_points,), 0.5))
    spec_albedo = torch.nn.Parameter(torch.full((num_points, 3), 0.04))
    amplitude = torch.rand(num_sg, 3)
    direction = torch.nn.functional.normalize(torch.randn(num_sg, 3), dim=-1)
    sharpness = torch.rand(num_sg) * 5 + 1
    spec = sg_warp_specular_term(amplitude, direction, sharpness, normal, roughness, view, spec_albedo)
    spec.sum().backward()
    return spec.detach(), roughness.grad, spec_albedo.grad, normals_texture.grad


spec, roughness_grad, albedo_grad, normal_grad = main()
