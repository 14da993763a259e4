# label: hazard raises no-twin
# why: the meta-loss accumulates `-mean(model(x_train))` over the adaptation steps while optimizer.step() updates the module parameters in place in between, so loss.backward() for the structural parameter finds the conditional/marginal weights its first term saved already modified.
# source: https://github.com/authors-1901-10912/A-Meta-Transfer-Objective-For-Learning-To-Disentangle-Causal-Mechanisms/issues/1
from itertools import chain

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def logsumexp(a, b):
    return torch.logsumexp(torch.stack([a, b]), dim=0)


def generate_data_categorical(num_samples, pi_A, pi_B_A):
    A = torch.multinomial(pi_A, num_samples, replacement=True)
    B = torch.stack([torch.multinomial(pi_B_A[a], 1)[0] for a in A])
    return torch.stack([A, B], dim=1)


class Marginal(nn.Module):
    def __init__(self, N, dtype=None):
        super(Marginal, self).__init__()
        self.N = N
        self.w = nn.Parameter(torch.zeros(N, dtype=dtype))

    def forward(self, inputs):
        cste = torch.logsumexp(self.w, dim=0)
        return self.w[inputs.squeeze(1)] - cste


class Conditional(nn.Module):
    def __init__(self, N, dtype=None):
        super(Conditional, self).__init__()
        self.N = N
        self.w = nn.Parameter(torch.zeros((N, N), dtype=dtype))

    def forward(self, inputs, conds):
        conds_ = conds.squeeze(1)
        cste = torch.logsumexp(self.w[conds_], dim=1)
        return self.w[conds_, inputs.squeeze(1)] - cste


class ModelA2B(nn.Module):
    def __init__(self, N, dtype):
        super(ModelA2B, self).__init__()
        self.p_A = Marginal(N, dtype=dtype)
        self.p_B_A = Conditional(N, dtype=dtype)

    def forward(self, inputs):
        inputs_A, inputs_B = torch.split(inputs, 1, dim=1)
        return self.p_A(inputs_A) + self.p_B_A(inputs_B, inputs_A)

    def set_ground_truth(self, pi_A, pi_B_A):
        self.p_A.w.data = torch.log(pi_A)
        self.p_B_A.w.data = torch.log(pi_B_A)


class ModelB2A(nn.Module):
    def __init__(self, N, dtype):
        super(ModelB2A, self).__init__()
        self.p_B = Marginal(N, dtype=dtype)
        self.p_A_B = Conditional(N, dtype=dtype)

    def forward(self, inputs):
        inputs_A, inputs_B = torch.split(inputs, 1, dim=1)
        return self.p_B(inputs_B) + self.p_A_B(inputs_A, inputs_B)

    def set_ground_truth(self, pi_A, pi_B_A):
        log_joint = torch.log(pi_A.unsqueeze(1)) + torch.log(pi_B_A)
        log_p_B = torch.logsumexp(log_joint, dim=0)
        self.p_B.w.data = log_p_B
        self.p_A_B.w.data = log_joint.t() - log_p_B.unsqueeze(1)


class StructuralModel(nn.Module):
    def __init__(self, N, dtype=None):
        super(StructuralModel, self).__init__()
        self.model_A_B = ModelA2B(N, dtype)
        self.model_B_A = ModelB2A(N, dtype)
        self.w = nn.Parameter(torch.tensor(0., dtype=dtype))

    def forward(self, inputs):
        return self.online_loglikelihood(self.model_A_B(inputs), self.model_B_A(inputs))

    def online_loglikelihood(self, logl_A_B, logl_B_A):
        log_alpha, log_1_m_alpha = F.logsigmoid(self.w), F.logsigmoid(-self.w)
        return logsumexp(log_alpha + torch.sum(logl_A_B), log_1_m_alpha + torch.sum(logl_B_A))

    def set_ground_truth(self, pi_A, pi_B_A):
        self.model_A_B.set_ground_truth(pi_A, pi_B_A)
        self.model_B_A.set_ground_truth(pi_A, pi_B_A)

    def modules_parameters(self):
        return chain(self.model_A_B.parameters(), self.model_B_A.parameters())


def main():
    N = 10
    model = StructuralModel(N, dtype=torch.float64)
    optimizer = torch.optim.SGD(model.modules_parameters(), lr=1e-1)
    meta_optimizer = torch.optim.RMSprop([model.w], lr=1e-2)
    num_transfer, num_gradient_steps, transfer_batch_size = 3, 2, 10
    dirichlet = torch.distributions.Dirichlet(torch.ones(N, dtype=torch.float64))

    model.w.data.zero_()
    pi_A_1 = dirichlet.sample()
    pi_B_A = dirichlet.sample((N,))
    for k in range(num_transfer):
        model.set_ground_truth(pi_A_1, pi_B_A)
        pi_A_2 = dirichlet.sample()

        model.zero_grad()
        loss = torch.tensor(0., dtype=torch.float64)
        for _ in range(num_gradient_steps):
            x_train = generate_data_categorical(transfer_batch_size, pi_A_2, pi_B_A)
            loss += -torch.mean(model(x_train))
            optimizer.zero_grad()
            inner_loss_A_B = -torch.mean(model.model_A_B(x_train))
            inner_loss_B_A = -torch.mean(model.model_B_A(x_train))
            inner_loss = inner_loss_A_B + inner_loss_B_A
            inner_loss.backward()
            optimizer.step()  # <-- IPL001

        meta_optimizer.zero_grad()
        loss.backward()
        meta_optimizer.step()
    return torch.sigmoid(model.w).detach()


alpha = main()
