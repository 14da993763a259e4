# label: safe
# why: the commit runs wrap_positions under torch.no_grad(): the solve output that masked_scatter_ folds back is not recorded by autograd, and forces / the cell gradient are taken afterwards with respect to the wrapped positions and the cell.
# source: https://github.com/atomistic-machine-learning/schnetpack/commit/a15e445a6fcbc12935ee94586d88fce5d811e19e
import torch

torch.manual_seed(0)


class System:
    """
    Container for all properties associated with a simulated molecular system (replicas x molecules x atoms).
    torch.solve(B, A) of the original is written as torch.linalg.solve(A, B).
    """

    def __init__(self, n_replicas, n_molecules, n_atoms, box_length=4.0):
        self.n_replicas = n_replicas
        self.n_molecules = n_molecules
        self.max_n_atoms = n_atoms
        self.positions = torch.rand(n_replicas, n_molecules, n_atoms, 3) * box_length * 1.3 - 0.15 * box_length
        self.momenta = torch.randn(n_replicas, n_molecules, n_atoms, 3)
        self.masses = torch.ones(1, n_molecules, n_atoms, 1)
        self.atom_masks = torch.ones(1, n_molecules, n_atoms, 1)
        self.cells = (box_length * torch.eye(3)).repeat(n_replicas, n_molecules, 1, 1)
        self.pbc = torch.tensor([[True, True, False]] * n_molecules)

    def wrap_positions(self, eps=1e-6):
        """
        Move atoms outside the box back into the box for all dimensions with periodic boundary
        conditions.

        Args:
            eps (float): Small offset for numerical stability
        """
        with torch.no_grad():
            # Compute fractional coordinates
            tmp_positions = self.positions.transpose(2, 3)
            tmp_cells = self.cells.transpose(2, 3)
            inv_positions = torch.linalg.solve(tmp_cells, tmp_positions)
            inv_positions = inv_positions.transpose(2, 3)

            # Get periodic coordinates
            periodic = torch.masked_select(inv_positions, self.pbc[None, :, None, :])

            # Apply periodic boundary conditions (with small buffer)
            periodic = periodic + eps
            periodic = periodic % 1.0
            periodic = periodic - eps

            # Update fractional coordinates
            inv_positions.masked_scatter_(self.pbc[None, :, None, :], periodic)

            # Convert to positions
            self.positions = torch.matmul(inv_positions, self.cells)


class PairRepulsion(torch.nn.Module):
    """Stand-in for the trained potential: soft pair repulsion plus a confining term."""

    def __init__(self):
        super().__init__()
        self.sigma = torch.nn.Parameter(torch.tensor(0.8))

    def forward(self, positions):
        d = torch.cdist(positions.flatten(0, 1), positions.flatten(0, 1)) + torch.eye(positions.shape[2]) * 1e3
        return (torch.exp(-(d / self.sigma) ** 2)).sum() + 0.01 * (positions ** 2).sum()


def main():
    system = System(n_replicas=2, n_molecules=1, n_atoms=5)
    model = PairRepulsion()
    system.wrap_positions()

    # forces and the pressure/stress term need gradients w.r.t. positions and cells
    system.positions.requires_grad_(True)
    system.cells.requires_grad_(True)
    positions0, cells0 = system.positions, system.cells
    # NPT enthalpy: potential energy plus external pressure times the cell volume
    energy = model(system.positions) + 0.05 * torch.det(system.cells).sum()
    energy.backward()
    return energy.detach(), positions0.grad.clone(), cells0.grad.clone(), system.positions.detach()


energy, forces, cell_grad, wrapped_positions = main()
