# label: safe
# why: in HMC._kinetic_energy the running `energy += value.dot(value)` only overwrites the fresh scalar from the previous dot product, which no backward formula saves, so the in-place sum is harmless.
# source: https://github.com/pyro-ppl/pyro/commit/4d481e6b4286ab2590ce28be7c2faea3e3be5cd5
import math

import torch

torch.manual_seed(0)


def potential_fn(z):
    # negative log joint of a small Gaussian model
    loc = torch.tensor([0.5, -1.0, 2.0])
    return 0.5 * ((z["x"] - loc) ** 2).sum() + 0.5 * (z["y"] ** 2).sum() * 4.0


def potential_grad(potential_fn, z):
    z_keys, z_nodes = zip(*z.items())
    for node in z_nodes:
        node.requires_grad_(True)
    potential_energy = potential_fn(z)
    grads = torch.autograd.grad(potential_energy, z_nodes)
    for node in z_nodes:
        node.requires_grad_(False)
    return dict(zip(z_keys, grads)), potential_energy.detach()


def velocity_verlet(z, r, potential_fn, inverse_mass_matrix, step_size, z_grads):
    z_next = z.copy()
    r_next = r.copy()
    for site_name in r_next:
        r_next[site_name] = r_next[site_name] + 0.5 * step_size * (-z_grads[site_name])
    for site_name in z:
        z_next[site_name] = z_next[site_name] + step_size * inverse_mass_matrix[site_name] * r_next[site_name]
    z_grads, potential_energy = potential_grad(potential_fn, z_next)
    for site_name in r_next:
        r_next[site_name] = r_next[site_name] + 0.5 * step_size * (-z_grads[site_name])
    return z_next, r_next, z_grads, potential_energy


class HMC:
    def __init__(self, potential_fn, step_size=0.1, num_steps=5):
        self.potential_fn = potential_fn
        self.step_size = step_size
        self.num_steps = num_steps
        self.inverse_mass_matrix = {"x": torch.ones(3), "y": torch.ones(2)}

    def _kinetic_energy(self, r_unscaled):
        energy = 0.
        for site_names, value in r_unscaled.items():
            energy += value.dot(value)
        return 0.5 * energy

    def sample(self, z):
        r = {k: torch.randn_like(v) for k, v in z.items()}
        r_unscaled = {k: v * self.inverse_mass_matrix[k].sqrt() for k, v in r.items()}
        z_grads, potential_energy = potential_grad(self.potential_fn, z)
        energy_current = self._kinetic_energy(r_unscaled) + potential_energy
        z_new, r_new = z, r
        for _ in range(self.num_steps):
            z_new, r_new, z_grads, potential_energy = velocity_verlet(
                z_new, r_new, self.potential_fn, self.inverse_mass_matrix, self.step_size, z_grads)
        r_new_unscaled = {k: v * self.inverse_mass_matrix[k].sqrt() for k, v in r_new.items()}
        energy_new = self._kinetic_energy(r_new_unscaled) + potential_energy
        delta_energy = energy_new - energy_current
        accept_prob = (-delta_energy).exp().clamp(max=1.0)
        return z_new, accept_prob, delta_energy


def main():
    kernel = HMC(potential_fn)
    z = {"x": torch.zeros(3), "y": torch.zeros(2)}
    probs = []
    for _ in range(3):
        z, accept_prob, delta_energy = kernel.sample(z)
        probs.append(accept_prob)
    return z["x"], z["y"], torch.stack(probs)


x, y, accept_probs = main()
