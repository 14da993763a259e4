# label: hazard silent
# why: Atten keeps f_in = f for the residual, then reshapes f with view() and pastes the attended values with f[:, :, index_outside] = ...; the paste writes through the view into f_in's storage, so f_out adds the pasted map instead of the original input features.
# source: https://github.com/zhenglab/partpainting/issues/1 (code: src/model/atten.py)
import torch
import torch.nn as nn

torch.manual_seed(0)


class Atten(nn.Module):
    def __init__(self, fin, fout):
        super(Atten, self).__init__()
        self.f_q = nn.Conv2d(fin, fout, kernel_size=1)
        self.f_k = nn.Conv2d(fin, fout, kernel_size=1)
        self.f_v = nn.Conv2d(fin, fin, kernel_size=1)
        self.fout = fout
        self.gamma = nn.Parameter(torch.full((1,), 0.5))
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, f, mask):
        (b, c, h, w) = f.shape
        c_shrink = self.fout

        # f_in
        f_in = f

        # mask crop
        f = f.view(b, c, -1)
        mask_one_channel = mask.view(b, 1, -1)[0][0]

        index_outside = torch.nonzero(1 - mask_one_channel)
        index_inside = torch.nonzero(mask_one_channel)

        f_outside = f[:, :, index_outside]
        f_inside = f[:, :, index_inside]

        # outside => query
        f_q = self.f_q(f_outside).view(b, c_shrink, -1)
        # inside => key
        f_k = self.f_k(f_inside).view(b, c_shrink, -1)
        # inside => value
        f_v = self.f_v(f_inside).view(b, c, -1)

        # attention => query x key
        energy = torch.bmm(f_q.permute(0, 2, 1), f_k)
        att = self.softmax(energy)

        # reshape value => value x attention
        r_v = torch.bmm(f_v, att.permute(0, 2, 1))

        # paste r_v to f
        f[:, :, index_outside] = r_v.unsqueeze(-1)  # <-- IPL002

        # f (b, c, -1) => f (b, c, h, w)
        f_reshape = f.view(b, c, h, w)

        # f_out
        f_out = f_reshape * (1 - mask) * self.gamma + f_in

        return f_reshape, f_out


class TinyGenerator(nn.Module):
    def __init__(self):
        super().__init__()
        self.up_3 = nn.Conv2d(3, 4, 3, padding=1)
        self.patchtransmit = Atten(4, 2)
        self.conv_img = nn.Conv2d(4, 3, 3, padding=1)

    def forward(self, x, mask):
        y_6 = self.up_3(x)
        _, y_6_a = self.patchtransmit(y_6, mask)
        return (torch.tanh(self.conv_img(y_6_a)) + 1) / 2


def main():
    g = TinyGenerator()
    img = torch.rand(2, 3, 6, 6)
    mask = torch.zeros(2, 1, 6, 6)
    mask[:, :, 1:4, 1:4] = 1
    out = g(img * mask, mask)
    loss = (out - img).abs().mean()
    loss.backward()
    return out.detach(), g.up_3.weight.grad, g.patchtransmit.gamma.grad


out, grad, gamma_grad = main()
