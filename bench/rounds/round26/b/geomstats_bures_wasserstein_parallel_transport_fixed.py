# label: safe
# why: the fix symmetrizes out of place (partial_horizontal_velocity = partial_horizontal_velocity + its transpose), so no tensor is written while its own transposed view is being read.
# source: https://github.com/geomstats/geomstats/commit/04bc52fb3a
import torch

torch.manual_seed(0)


class Matrices:
    @staticmethod
    def mul(*args):
        result = args[0]
        for mat in args[1:]:
            result = torch.matmul(result, mat)
        return result

    @staticmethod
    def transpose(mat):
        return mat.transpose(-1, -2)


class SymmetricMatrices:
    @staticmethod
    def powerm(mat, powers):
        eigvals, eigvecs = torch.linalg.eigh(mat)
        results = []
        for power in powers:
            results.append(Matrices.mul(eigvecs, torch.diag_embed(eigvals ** power), Matrices.transpose(eigvecs)))
        return results if len(results) > 1 else results[0]


def solve_sylvester(a, b, q):
    n = a.shape[-1]
    eye = torch.eye(n, dtype=a.dtype)
    lhs = torch.kron(eye, a) + torch.kron(b.transpose(-1, -2).contiguous(), eye)
    sol = torch.linalg.solve(lhs, q.transpose(-1, -2).contiguous().view(-1))
    return sol.reshape(n, n).transpose(-1, -2)


class SPDBuresWassersteinMetric:
    def parallel_transport(self, tangent_vec, base_point, end_point, n_steps=4):
        horizontal_lift_a = solve_sylvester(base_point, base_point, tangent_vec)

        square_root_bp, inverse_square_root_bp = SymmetricMatrices.powerm(base_point, [0.5, -0.5])
        end_point_lift = Matrices.mul(square_root_bp, end_point, square_root_bp)
        square_root_lift = SymmetricMatrices.powerm(end_point_lift, [0.5])

        horizontal_velocity = torch.matmul(inverse_square_root_bp, square_root_lift)
        partial_horizontal_velocity = Matrices.mul(horizontal_velocity, square_root_bp)
        partial_horizontal_velocity = partial_horizontal_velocity + Matrices.transpose(
            partial_horizontal_velocity
        )

        def force(state, time):
            horizontal_geodesic_t = (1 - time) * square_root_bp + time * horizontal_velocity
            geodesic_t = (
                (1 - time) ** 2 * base_point
                + time * (1 - time) * partial_horizontal_velocity
                + time ** 2 * end_point
            )
            align = Matrices.mul(horizontal_geodesic_t, Matrices.transpose(horizontal_velocity - square_root_bp), state)
            right = align + Matrices.transpose(align)
            return solve_sylvester(geodesic_t, geodesic_t, -right)

        state = horizontal_lift_a
        dt = 1.0 / n_steps
        for i in range(n_steps):
            state = state + dt * force(state, i * dt)
        final_align = Matrices.mul(end_point, state)
        return final_align + Matrices.transpose(final_align)


def random_spd(n):
    a = torch.randn(n, n, dtype=torch.float64)
    return a @ a.T + n * torch.eye(n, dtype=torch.float64)


def main():
    n = 3
    metric = SPDBuresWassersteinMetric()
    base_point = random_spd(n).requires_grad_()
    end_point = random_spd(n)
    sym = torch.randn(n, n, dtype=torch.float64)
    tangent_vec = sym + sym.T
    transported = metric.parallel_transport(tangent_vec, base_point, end_point)
    transported.pow(2).sum().backward()
    return transported.detach(), base_point.grad


transported, base_point_grad = main()
