# label: safe
# why: the CLBF controller fills freshly allocated zero buffers (JV, Lf_V, Lg_V) with slice assignments and accumulates scalar loss terms with +=; none of these tensors had been saved by an earlier backward formula when they were written.
# source: https://github.com/MIT-REALM/neural_clbf/blob/00256dd9954a31aa4471e0968560b65856976997/neural_clbf/controllers/neural_clbf_controller.py
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ControlAffineSystem:
    n_dims = 2
    n_controls = 1

    def control_affine_dynamics(self, x, params=None):
        k = params["k"]
        f = (-k * x).unsqueeze(-1)
        g = torch.ones(x.shape[0], self.n_dims, self.n_controls)
        return f, g


class NeuralCLBFController(nn.Module):
    def __init__(self, dynamics_model, scenarios, hidden=8, safe_level=1.0):
        super().__init__()
        self.dynamics_model = dynamics_model
        self.scenarios = scenarios
        self.n_scenarios = len(scenarios)
        self.safe_level = safe_level
        self.x_center = torch.zeros(dynamics_model.n_dims)
        self.x_range = torch.ones(dynamics_model.n_dims) * 2.0
        self.V_layers: OrderedDict = OrderedDict()
        self.V_layers["input_linear"] = nn.Linear(dynamics_model.n_dims, hidden)
        self.V_layers["input_activation"] = nn.Tanh()
        self.V_layers["output_linear"] = nn.Linear(hidden, 1)
        self.V_nn = nn.Sequential(self.V_layers)

    def normalize(self, x):
        return (x - self.x_center.type_as(x)) / self.x_range.type_as(x)

    def V_with_jacobian(self, x):
        x = self.normalize(x)
        bs = x.shape[0]
        JV = torch.zeros((bs, x.shape[-1], x.shape[-1])).type_as(x)
        for dim in range(self.dynamics_model.n_dims):
            JV[:, dim, dim] = 1.0 / self.x_range[dim].type_as(x)
        V = x
        for layer in self.V_nn:
            V = layer(V)
            if isinstance(layer, nn.Linear):
                JV = torch.matmul(layer.weight, JV)
            elif isinstance(layer, nn.Tanh):
                JV = torch.matmul(torch.diag_embed(1 - V ** 2), JV)
        return V, JV

    def V(self, x):
        V, _ = self.V_with_jacobian(x)
        return V

    def V_lie_derivatives(self, x):
        _, gradV = self.V_with_jacobian(x)
        batch_size = x.shape[0]
        Lf_V = torch.zeros(batch_size, self.n_scenarios, 1).type_as(x)
        Lg_V = torch.zeros(batch_size, self.n_scenarios, self.dynamics_model.n_controls).type_as(x)
        for i in range(self.n_scenarios):
            s = self.scenarios[i]
            f, g = self.dynamics_model.control_affine_dynamics(x, params=s)
            Lf_V[:, i, :] = torch.bmm(gradV, f).squeeze(1)
            Lg_V[:, i, :] = torch.bmm(gradV, g).squeeze(1)
        return Lf_V, Lg_V

    def boundary_loss(self, x, goal_mask, safe_mask):
        eps = 1e-2
        loss = []
        V = self.V(x)
        goal_term = F.relu(eps + V[goal_mask]).mean()
        goal_term += (self.V(torch.zeros(1, 2)) ** 2).mean()
        loss.append(("CLBF goal term", goal_term))
        safe_clbf_term = F.relu(eps + V[safe_mask] - self.safe_level).mean()
        loss.append(("CLBF safe region term", safe_clbf_term))
        return loss

    def descent_loss(self, x):
        Lf_V, Lg_V = self.V_lie_derivatives(x)
        u = -Lg_V.sum(1)
        Vdot = Lf_V.sum(1) + (Lg_V.sum(1) * u)
        return [("CLBF descent term", F.relu(Vdot + 1.0 * self.V(x)).mean())]

    def training_step(self, batch, batch_idx):
        x, goal_mask, safe_mask = batch
        component_losses = {}
        component_losses.update(self.descent_loss(x))
        component_losses.update(self.boundary_loss(x, goal_mask, safe_mask))
        total_loss = torch.tensor(0.0).type_as(x)
        for _, loss_value in component_losses.items():
            if not torch.isnan(loss_value):
                total_loss += loss_value
        return {"loss": total_loss, **component_losses}


controller = NeuralCLBFController(ControlAffineSystem(), scenarios=[{"k": 1.0}, {"k": 0.5}])
x = torch.randn(6, 2)
goal_mask = x.norm(dim=-1) < 0.8
safe_mask = x.norm(dim=-1) < 1.5
batch_dict = controller.training_step((x, goal_mask, safe_mask), 0)
loss = batch_dict["loss"]
loss.backward()
