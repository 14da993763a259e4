# label: hazard raises
# why: shap's DeepExplainer puts full backward hooks on every leaf module, so each GraphConvolution output comes out of BackwardHookFunction; Chebynet then accumulates into that output with `result +=`, an in-place write autograd forbids
# source: https://github.com/torcheeg/torcheeg/pull/106 (torcheeg/models/gnn/dgcnn.py with shap/explainers/_deep/deep_pytorch.py)
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GraphConvolution(nn.Module):
    def __init__(self, in_channels, out_channels, bias=False):
        super(GraphConvolution, self).__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.weight = nn.Parameter(torch.FloatTensor(in_channels, out_channels))
        nn.init.xavier_normal_(self.weight)
        self.bias = None
        if bias:
            self.bias = nn.Parameter(torch.FloatTensor(out_channels))
            nn.init.zeros_(self.bias)

    def forward(self, x, adj):
        out = torch.matmul(adj, x)
        out = torch.matmul(out, self.weight)
        if self.bias is not None:
            return out + self.bias
        else:
            return out


class Linear(nn.Module):
    def __init__(self, in_channels, out_channels, bias=True):
        super(Linear, self).__init__()
        self.linear = nn.Linear(in_channels, out_channels, bias=bias)
        nn.init.xavier_normal_(self.linear.weight)
        if bias:
            nn.init.zeros_(self.linear.bias)

    def forward(self, inputs):
        return self.linear(inputs)


def normalize_A(A, symmetry=False):
    A = F.relu(A)
    d = torch.sum(A, 1)
    d = 1 / torch.sqrt(d + 1e-10)
    D = torch.diag_embed(d)
    L = torch.matmul(torch.matmul(D, A), D)
    return L


def generate_cheby_adj(A, num_layers):
    support = []
    for i in range(num_layers):
        if i == 0:
            support.append(torch.eye(A.shape[1]).to(A.device))
        elif i == 1:
            support.append(A)
        else:
            temp = torch.matmul(support[-1], A)
            support.append(temp)
    return support


class Chebynet(nn.Module):
    def __init__(self, in_channels, num_layers, out_channels):
        super(Chebynet, self).__init__()
        self.num_layers = num_layers
        self.gc1 = nn.ModuleList()
        for i in range(num_layers):
            self.gc1.append(GraphConvolution(in_channels, out_channels))

    def forward(self, x, L):
        adj = generate_cheby_adj(L, self.num_layers)
        for i in range(len(self.gc1)):
            if i == 0:
                result = self.gc1[i](x, adj[i])
            else:
                result += self.gc1[i](x, adj[i])  # <-- IPL001: in-place into a hooked module's output
        result = F.relu(result)
        return result


class DGCNN(nn.Module):
    def __init__(self, in_channels=5, num_electrodes=6, num_layers=2, hid_channels=4, num_classes=2):
        super(DGCNN, self).__init__()
        self.layer1 = Chebynet(in_channels, num_layers, hid_channels)
        self.BN1 = nn.BatchNorm1d(in_channels)
        self.fc1 = Linear(num_electrodes * hid_channels, 8)
        self.fc2 = Linear(8, num_classes)
        self.A = nn.Parameter(torch.FloatTensor(num_electrodes, num_electrodes))
        nn.init.xavier_normal_(self.A)

    def forward(self, x):
        x = self.BN1(x.transpose(1, 2)).transpose(1, 2)
        L = normalize_A(self.A)
        result = self.layer1(x, L)
        result = result.reshape(x.shape[0], -1)
        result = F.relu(self.fc1(result))
        result = self.fc2(result)
        return result


# --- the parts of shap.explainers._deep.deep_pytorch that matter here ---
def passthrough(module, grad_input, grad_output):
    return None


def linear_1d(module, grad_input, grad_output):
    return None


op_handler = {'Linear': linear_1d, 'BatchNorm1d': linear_1d, 'Dropout': passthrough}


def deeplift_grad(module, grad_input, grad_output):
    module_type = module.__class__.__name__
    if module_type in op_handler:
        if op_handler[module_type].__name__ not in ['passthrough', 'linear_1d']:
            return op_handler[module_type](module, grad_input, grad_output)
    else:
        warnings.warn(f'unrecognized nn.Module: {module_type}')
        return grad_input


def add_interim_values(module, input, output):
    try:
        del module.x
    except AttributeError:
        pass
    try:
        del module.y
    except AttributeError:
        pass


class PyTorchDeep:
    def __init__(self, model, data):
        self.model = model.eval()
        self.data = [data]

    def add_handles(self, model, forward_handle, backward_handle):
        handles_list = []
        model_children = list(model.children())
        if model_children:
            for child in model_children:
                handles_list.extend(self.add_handles(child, forward_handle, backward_handle))
        else:  # leaves
            handles_list.append(model.register_forward_hook(forward_handle))
            handles_list.append(model.register_full_backward_hook(backward_handle))
        return handles_list

    def gradient(self, idx, inputs):
        self.model.zero_grad()
        X = [x.requires_grad_() for x in inputs]
        outputs = self.model(*X)
        selected = [val for val in outputs[:, idx]]
        grads = []
        for i, x in enumerate(X):
            grad = torch.autograd.grad(selected, x, retain_graph=True if i + 1 < len(X) else None, allow_unused=True)[0]
            grads.append(grad)
        return grads

    def shap_values(self, X):
        X = [X.detach()]
        handles = self.add_handles(self.model, add_interim_values, deeplift_grad)
        phis = torch.zeros_like(X[0])
        for j in range(X[0].shape[0]):
            tiled_X = X[0][j:j + 1].repeat(self.data[0].shape[0], 1, 1)
            joint_x = [torch.cat((tiled_X, self.data[0]), dim=0)]
            sample_phis = self.gradient(0, joint_x)
            phis[j] = (sample_phis[0][self.data[0].shape[0]:] * (X[0][j:j + 1] - self.data[0])).mean(0)
        for handle in handles:
            handle.remove()
        return phis


model = DGCNN()
background = torch.randn(3, 6, 5)
test = torch.randn(2, 6, 5)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    explainer = PyTorchDeep(model, background)
    shap_values = explainer.shap_values(test)
