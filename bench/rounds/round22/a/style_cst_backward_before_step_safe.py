# label: safe no-twin
# why: with backward_G_main moved before optimizer_G_aux.step() (the fix suggested in the issue), both backward passes finish on the untouched forward graph and only then do the two optimizers update the weights.
# source: https://github.com/nnaisense/conditional-style-transfer/issues/2
import torch
import torch.nn as nn
import itertools

torch.manual_seed(0)


class ResnetGeneratorResidual(nn.Module):
    def __init__(self, input_nc=3, output_nc=3, ngf=8, N_cont=6, N_style=2):
        super(ResnetGeneratorResidual, self).__init__()
        self.N_cont = N_cont
        self.N_style = N_style
        # encoder (content + style channels)
        self.model_enc = nn.Sequential(nn.Conv2d(input_nc, ngf, 3, padding=1), nn.ReLU(),
                                       nn.Conv2d(ngf, N_cont + N_style, 3, padding=1))
        # Model merging content and style
        self.model_merge = nn.Conv2d(N_cont + N_style, ngf, 1)
        self.model_merge_aux = nn.Conv2d(N_cont + N_style, ngf, 1)
        # decoders
        self.model_dec = nn.Sequential(nn.ReLU(), nn.Conv2d(ngf, output_nc, 3, padding=1), nn.Tanh())
        self.model_dec_aux = nn.Sequential(nn.ReLU(), nn.Conv2d(ngf, output_nc, 3, padding=1), nn.Tanh())

    def freeze_params(self, model):
        for param in model.parameters():
            param.requires_grad = False

    def unfreeze_params(self, model):
        for param in model.parameters():
            param.requires_grad = True

    def optimize_aux(self):
        self.unfreeze_params(self.model_enc)
        self.unfreeze_params(self.model_merge_aux)
        self.unfreeze_params(self.model_dec_aux)
        self.freeze_params(self.model_merge)
        self.freeze_params(self.model_dec)

    def optimize_main(self):
        self.freeze_params(self.model_enc)
        self.freeze_params(self.model_merge_aux)
        self.freeze_params(self.model_dec_aux)
        self.unfreeze_params(self.model_merge)
        self.unfreeze_params(self.model_dec)

    def optimize_all(self):
        for m in [self.model_enc, self.model_merge_aux, self.model_dec_aux, self.model_merge, self.model_dec]:
            self.unfreeze_params(m)

    def forward(self, inputs):
        real_A, style_B = inputs
        z_A = self.model_enc(real_A)
        z_B = self.model_enc(style_B)
        z_C, z_S_A = z_A[:, :self.N_cont], z_A[:, self.N_cont:]
        z_S_B = z_B[:, self.N_cont:]
        fake_B = self.model_dec(self.model_merge(torch.cat([z_C, z_S_B], dim=1)))
        rec_A_aux = self.model_dec_aux(self.model_merge_aux(torch.cat([z_C, z_S_A], dim=1)))
        z_rec = self.model_enc(fake_B)
        feats = {'rec': {'cont': z_rec[:, :self.N_cont], 'style': z_rec[:, self.N_cont:]},
                 'inp_src': {'cont': z_C, 'style': z_S_A},
                 'dst_tgt': {'style': z_S_B}}
        return fake_B, rec_A_aux, feats


class GANAuxModel(object):
    def __init__(self, lr=1e-3):
        self.netG = ResnetGeneratorResidual()
        self.criterionL2 = torch.nn.MSELoss()
        self.criterionSmoothL1Elemwise = torch.nn.SmoothL1Loss(reduction='none')
        # initialize optimizers
        self.netG.optimize_aux()
        self.optimizer_G_aux = torch.optim.Adam(itertools.chain(filter(lambda p: p.requires_grad, self.netG.parameters())), lr=lr)
        self.netG.optimize_main()
        self.optimizer_G_main = torch.optim.Adam(itertools.chain(filter(lambda p: p.requires_grad, self.netG.parameters())), lr=lr)
        self.netG.optimize_all()

    def set_input(self, input):
        self.real_A = input['A']
        self.style_B = input['B_style']

    def forward(self):
        self.fake_B, self.rec_A_aux, self.feats = self.netG([self.real_A, self.style_B])

    def backward_G_main(self, retain_graph=False):
        # Transfer loss
        self.loss_transf = 0.0
        self.loss_transf += torch.mean(torch.sum(self.criterionSmoothL1Elemwise(self.feats['rec']['cont'], self.feats['inp_src']['cont'].detach()), dim=1))
        self.loss_transf += torch.mean(torch.sum(self.criterionSmoothL1Elemwise(self.feats['rec']['style'], self.feats['dst_tgt']['style'].detach()), dim=1))
        self.loss_transf /= 2.0
        self.loss_G = self.loss_transf + self.fake_B.abs().mean()
        self.loss_G.backward(retain_graph=retain_graph)

    def backward_G_aux(self, retain_graph=False):
        # Content latent loss
        self.loss_z_cont = torch.mean(torch.sum(self.criterionSmoothL1Elemwise(self.feats['rec']['cont'], self.feats['inp_src']['cont'].detach()), dim=1))
        # Identity loss
        self.loss_idt_aux = self.criterionL2(self.rec_A_aux, self.real_A.detach())
        self.loss_G_aux = self.loss_idt_aux + self.loss_z_cont
        self.loss_G_aux.backward(retain_graph=retain_graph)

    def optimize_parameters(self):
        # forward
        self.forward()
        # G AUX
        self.netG.optimize_aux()
        self.optimizer_G_aux.zero_grad()
        self.backward_G_aux(retain_graph=True)
        # G MAIN: run its backward before any optimizer touches the shared encoder
        self.netG.optimize_main()
        self.optimizer_G_main.zero_grad()
        self.backward_G_main()
        self.optimizer_G_aux.step()
        self.optimizer_G_main.step()

        self.netG.optimize_all()


def main():
    model = GANAuxModel()
    losses = []
    for it in range(2):
        model.set_input({'A': torch.rand(2, 3, 8, 8) * 2 - 1, 'B_style': torch.rand(2, 3, 8, 8) * 2 - 1})
        model.optimize_parameters()
        losses.append(model.loss_G.detach() + model.loss_G_aux.detach())
    return torch.stack(losses), model.netG.model_enc[0].weight.detach(), model.netG.model_dec[1].weight.detach()


losses, enc_weight, dec_weight = main()
