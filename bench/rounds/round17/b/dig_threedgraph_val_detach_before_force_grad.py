# label: hazard raises
# why: val() detaches the predicted energy in place (out.detach_()) to collect it, then asks autograd.grad for the forces d(out)/d(pos), but out no longer belongs to the graph.
# source: https://github.com/divelab/DIG/commit/8a5b650218a9646e2f236bca53c2a00acff73763
import torch
import torch.nn as nn
from torch.autograd import grad

torch.manual_seed(0)


class Batch:
    def __init__(self, z, pos, y, force, edge_index):
        self.z, self.pos, self.y, self.force, self.edge_index = z, pos, y, force, edge_index


class SchNetLike(nn.Module):
    def __init__(self, num_types=5, hidden=16):
        super().__init__()
        self.emb = nn.Embedding(num_types, hidden)
        self.filter = nn.Sequential(nn.Linear(1, hidden), nn.Softplus(), nn.Linear(hidden, hidden))
        self.out = nn.Sequential(nn.Linear(hidden, hidden), nn.Softplus(), nn.Linear(hidden, 1))

    def forward(self, batch_data):
        z, pos, (row, col) = batch_data.z, batch_data.pos, batch_data.edge_index
        dist = (pos[row] - pos[col]).norm(dim=-1, keepdim=True)
        h = self.emb(z)
        msg = self.filter(dist) * h[col]
        h = h + torch.zeros_like(h).index_add(0, row, msg)
        return self.out(h).sum(dim=0, keepdim=True)


class Evaluator:
    def eval(self, input_dict):
        return {"mae": (input_dict["y_true"] - input_dict["y_pred"]).abs().mean()}


class run:
    def val(self, model, data_loader, energy_and_force, p, evaluation, device="cpu"):
        model.eval()
        preds = torch.Tensor([]).to(device)
        targets = torch.Tensor([]).to(device)
        if energy_and_force:
            preds_force = torch.Tensor([]).to(device)
            targets_force = torch.Tensor([]).to(device)
        for step, batch_data in enumerate(data_loader):
            out = model(batch_data)
            preds = torch.cat([preds, out.detach_()], dim=0)  # <-- IPL006: detaches out in place before grad(outputs=out)
            targets = torch.cat([targets, batch_data.y.unsqueeze(1)], dim=0)
            if energy_and_force:
                force = -grad(outputs=out, inputs=batch_data.pos, grad_outputs=torch.ones_like(out), create_graph=True, retain_graph=True)[0]
                preds_force = torch.cat([preds_force, force.detach_()], dim=0)
                targets_force = torch.cat([targets_force, batch_data.force], dim=0)
        input_dict = {"y_true": targets, "y_pred": preds}
        if energy_and_force:
            input_dict_force = {"y_true": targets_force, "y_pred": preds_force}
            return evaluation.eval(input_dict)["mae"] + p * evaluation.eval(input_dict_force)["mae"]
        return evaluation.eval(input_dict)["mae"]


def make_molecule(n):
    pos = torch.randn(n, 3, requires_grad=True)
    idx = torch.arange(n)
    row, col = torch.meshgrid(idx, idx, indexing="ij")
    mask = row != col
    return Batch(torch.randint(0, 5, (n,)), pos, torch.randn(1), torch.randn(n, 3), (row[mask], col[mask]))


model = SchNetLike()
loader = [make_molecule(4), make_molecule(3)]
valid_mae = run().val(model, loader, energy_and_force=True, p=100, evaluation=Evaluator())
