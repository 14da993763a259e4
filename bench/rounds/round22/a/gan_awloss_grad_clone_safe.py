# label: safe no-twin
# why: with the fix grad_real_tensor and grad_fake_tensor hold clones of param.grad, so zeroing the .grad buffers in place between the two backward passes (and the accumulation of the fake gradient into them) no longer changes the saved real gradient used to build the aw-weighted param.grad.
# source: https://github.com/vasily789/adaptive-weighted-gans/commit/dd604c797d9a4ec09c870127ae6a8064e74b99c4 ("fix overwrite bug", PR #1, aw_loss.py)
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class aw_method():
    def __init__(self, alpha1=0.5, alpha2=0.75, delta=0.05, epsilon=0.05, normalized_aw=True):
        assert alpha1 < alpha2
        self._alpha1 = alpha1
        self._alpha2 = alpha2
        self._delta = delta
        self._epsilon = epsilon
        self._normalized_aw = normalized_aw

    def aw_loss(self, Dloss_real, Dloss_fake, Dis_opt, Dis_Net, real_validity, fake_validity):
        # resetting gradient back to zero
        Dis_opt.zero_grad(set_to_none=False)

        # computing real batch gradient
        Dloss_real.backward(retain_graph=True)
        # tensor with real gradients
        grad_real_tensor = [param.grad.clone() for _, param in Dis_Net.named_parameters()]
        grad_real_list = torch.cat([grad.reshape(-1) for grad in grad_real_tensor], dim=0)
        # calculating the norm of the real gradient
        rdotr = torch.dot(grad_real_list, grad_real_list).item() + 1e-4  # 1e-4 added to avoid division by zero
        r_norm = math.sqrt(rdotr)

        # resetting gradient back to zero
        Dis_opt.zero_grad(set_to_none=False)

        # computing fake batch gradient
        Dloss_fake.backward()
        # tensor with fake gradients
        grad_fake_tensor = [param.grad.clone() for _, param in Dis_Net.named_parameters()]
        grad_fake_list = torch.cat([grad.reshape(-1) for grad in grad_fake_tensor], dim=0)
        # calculating the norm of the fake gradient
        fdotf = torch.dot(grad_fake_list, grad_fake_list).item() + 1e-4
        f_norm = math.sqrt(fdotf)

        # dot product between real and fake gradients
        rdotf = torch.dot(grad_real_list, grad_fake_list).item()
        fdotr = rdotf

        # Real and Fake scores
        rs = torch.mean(torch.sigmoid(real_validity))
        fs = torch.mean(torch.sigmoid(fake_validity))

        if self._normalized_aw:
            # Implementation of normalized version of aw-method, i.e. Algorithm 1
            if rs < self._alpha1 or rs < (fs - self._delta):
                if rdotf <= 0:
                    w_r = (1 / r_norm) + self._epsilon
                    w_f = (-fdotr / (fdotf * r_norm)) + self._epsilon
                else:
                    w_r = (1 / r_norm) + self._epsilon
                    w_f = self._epsilon
            elif rs > self._alpha2 and rs > (fs - self._delta):
                if rdotf <= 0:
                    w_r = (-rdotf / (rdotr * f_norm)) + self._epsilon
                    w_f = (1 / f_norm) + self._epsilon
                else:
                    w_r = self._epsilon
                    w_f = (1 / f_norm) + self._epsilon
            else:
                w_r = (1 / r_norm) + self._epsilon
                w_f = (1 / f_norm) + self._epsilon
        else:
            w_r = 1 + self._epsilon
            w_f = 1 + self._epsilon

        # calculating aw_loss
        aw_loss = w_r * Dloss_real + w_f * Dloss_fake

        # updating gradient, i.e. getting aw_loss gradient
        for index, (_, param) in enumerate(Dis_Net.named_parameters()):
            param.grad = w_r * grad_real_tensor[index] + w_f * grad_fake_tensor[index]

        return aw_loss


def main():
    Gen_Net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
    Dis_Net = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
    Dis_opt = torch.optim.SGD(Dis_Net.parameters(), lr=0.1)
    criterion = nn.BCEWithLogitsLoss()
    aw = aw_method()

    real_imgs = torch.randn(6, 8) + 1.0
    z = torch.randn(6, 4)
    fake_imgs = Gen_Net(z).detach()

    real_validity = Dis_Net(real_imgs)
    fake_validity = Dis_Net(fake_imgs)
    Dloss_real = criterion(real_validity, torch.ones_like(real_validity))
    Dloss_fake = criterion(fake_validity, torch.zeros_like(fake_validity))

    d_loss = aw.aw_loss(Dloss_real, Dloss_fake, Dis_opt, Dis_Net, real_validity, fake_validity)
    Dis_opt.step()
    return d_loss.detach(), Dis_Net[0].weight.detach().clone()


d_loss, d_weight = main()
