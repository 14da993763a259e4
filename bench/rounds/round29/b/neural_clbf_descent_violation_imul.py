# label: hazard raises
# why: violation is the output of F.relu, which ReluBackward saves to build its mask, and `violation *= condition_active` overwrites it in place before loss.backward() runs.
# source: https://github.com/MIT-REALM/neural_clbf/pull/10 (commit 626cc1c4e944e58c2c2eb265cfa8794566f03745)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ControlAffineSystem:
    n_dims = 2
    n_controls = 1
    dt = 0.01

    def control_affine_dynamics(self, x, params=None):
        m = 1.0 if params is None else params["m"]
        f = torch.stack([x[:, 1], -torch.sin(x[:, 0]) / m], dim=-1).unsqueeze(-1)
        g = torch.zeros(x.shape[0], self.n_dims, self.n_controls)
        g[:, 1, 0] = 1.0 / m
        return f, g

    def closed_loop_dynamics(self, x, u, params=None):
        f, g = self.control_affine_dynamics(x, params)
        return (f + torch.bmm(g, u.unsqueeze(-1))).squeeze(-1)


class NeuralCLBFController(nn.Module):
    def __init__(self, dynamics_model, scenarios, clf_lambda=1.0, safe_level=1.0):
        super().__init__()
        self.dynamics_model = dynamics_model
        self.scenarios = scenarios
        self.n_scenarios = len(scenarios)
        self.clf_lambda = clf_lambda
        self.safe_level = safe_level
        self.barrier = True
        self.controller_period = 0.05
        self.V_nn = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))
        self.u_nn = nn.Linear(2, 1)

    def V(self, x):
        return 0.5 * self.V_nn(x).pow(2).squeeze(-1)

    def descent_loss(self, x):
        loss = []
        eps = 0.1
        V = self.V(x)
        if self.barrier:
            condition_active = torch.sigmoid(10 * (self.safe_level + eps - V))
        else:
            condition_active = torch.tensor(1.0)

        u_qp = self.u_nn(x)
        eps = 1.0
        clbf_descent_term_sim = torch.tensor(0.0).type_as(x)
        clbf_descent_acc_sim = torch.tensor(0.0).type_as(x)
        for s in self.scenarios:
            xdot = self.dynamics_model.closed_loop_dynamics(x, u_qp, params=s)
            x_next = x + self.dynamics_model.dt * xdot
            V_next = self.V(x_next)
            violation = F.relu(
                eps + (V_next - V) / self.controller_period + self.clf_lambda * V
            )
            violation *= condition_active  # <-- IPL001

            clbf_descent_term_sim += violation.mean()
            clbf_descent_acc_sim += (violation <= eps).sum() / (
                violation.nelement() * self.n_scenarios
            )
        loss.append(("CLBF descent term (simulated)", clbf_descent_term_sim))
        return loss


def main():
    controller = NeuralCLBFController(ControlAffineSystem(), [{"m": 1.0}, {"m": 1.5}])
    x = torch.randn(32, 2)
    component_losses = dict(controller.descent_loss(x))
    total_loss = torch.tensor(0.0)
    for _, loss_value in component_losses.items():
        if not torch.isnan(loss_value):
            total_loss = total_loss + loss_value
    total_loss.backward()
    return total_loss.detach(), controller.V_nn[0].weight.grad


total_loss, grad = main()
