# label: hazard raises no-twin
# why: the per-sample loss is split into loss_all (samples that complete the accumulated batch) and loss_all_rest; once aveGrad reaches the batch size the 'sal'/'sound'/'fusion' optimizers step in place between loss_all.backward(retain_graph=True) and loss_all_rest.backward() through the same graph
# source: https://github.com/atsiami/STAViS/issues/9 (train.py train_epoch)
import torch
import torch.nn as nn
import torch.optim as optim
from types import SimpleNamespace

torch.manual_seed(0)


class av_module(nn.Module):
    def __init__(self, rgb_nfilters, audio_nfilters, img_size, hidden_layers):
        super(av_module, self).__init__()
        self.rgb_nfilters = rgb_nfilters
        self.img_size = img_size
        self.out_layers = 4
        self.relu = nn.ReLU()
        self.affine_rgb = nn.Linear(rgb_nfilters, hidden_layers)
        self.affine_audio = nn.Linear(audio_nfilters, hidden_layers)
        self.w_a_rgb = nn.Bilinear(hidden_layers, hidden_layers, self.out_layers, bias=True)

    def forward(self, rgb, audio):
        rgb = rgb.permute(0, 2, 3, 1)
        rgb = rgb.reshape(rgb.size(0), -1, self.rgb_nfilters)
        rgb = self.relu(self.affine_rgb(rgb))
        audio1 = self.relu(self.affine_audio(audio))
        a_rgb_B = self.w_a_rgb(rgb.contiguous(),
                               audio1.unsqueeze(1).expand(-1, self.img_size[0] * self.img_size[1], -1).contiguous())
        sal_bilin = a_rgb_B.view(-1, self.img_size[0], self.img_size[1], self.out_layers)
        return sal_bilin.permute(0, 3, 1, 2)


class DAVE(nn.Module):
    def __init__(self):
        super(DAVE, self).__init__()
        self.visual = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(inplace=True))
        self.sound = nn.Sequential(nn.Linear(10, 8), nn.ReLU())
        self.score_dsn = nn.Conv2d(6, 1, 1)
        self.fusion = av_module(6, 8, (4, 4), 5)
        self.fuseav = nn.Conv2d(4 + 1, 1, 1)

    def forward(self, inputs, audio):
        feat = self.visual(inputs)
        side = self.score_dsn(feat)
        av = self.fusion(feat, self.sound(audio))
        out = self.fuseav(torch.cat([av, side], dim=1))
        return {'sal': [side, out]}


def cross_entropy_loss(output, target, valid, reduce=False):
    l = nn.functional.binary_cross_entropy_with_logits(output, target, reduction='none')
    return l.flatten(1).mean(1) * valid


def train_epoch(data_loader, model, optimizer, opt, epoch, nEpochs):
    for data, targets, valid in data_loader:
        inputs = data['rgb']
        outputs = model(inputs, data['audio'])

        sal_losses_BCE = [0] * len(outputs['sal'])
        for ii in range(0, len(outputs['sal'])):
            sal_losses_BCE[ii] = cross_entropy_loss(outputs['sal'][ii], targets['salmap'], valid['sal'])
        loss = {'sal': []}
        loss['sal'].append((1 - epoch / nEpochs) * sum(sal_losses_BCE[:-1]) + sal_losses_BCE[-1])
        loss['sal_total'] = opt.sal_weights[0] * loss['sal'][0]

        samples_need = {'sal': []}
        samples_need['sal'] = torch.nonzero(valid['sal'])[0:(opt.batch_sizes['sal'] - opt.aveGrad['sal']), 0]
        samples_rest = {'sal': []}
        samples_rest['sal'] = torch.nonzero(valid['sal'])[(opt.batch_sizes['sal'] - opt.aveGrad['sal']):, 0]

        loss_all = torch.sum(loss['sal_total'][samples_need['sal']]) / opt.batch_sizes['sal']
        if (samples_rest['sal'].size(0)) > 0:
            loss_all_rest = torch.sum(loss['sal_total'][samples_rest['sal']]) / opt.batch_sizes['sal']
        else:
            loss_all_rest = []

        if (samples_rest['sal'].size(0)) > 0:
            loss_all.backward(retain_graph=True)
        else:
            loss_all.backward()

        opt.aveGrad['global'] += samples_need['sal'].size(0)
        opt.aveGrad['sal'] += samples_need['sal'].size(0)

        if (opt.aveGrad['sal'] >= opt.batch_sizes['sal']):
            optimizer['sal'].step()  # <-- IPL001: steps parameters that loss_all_rest's graph still needs
            optimizer['sal'].zero_grad()
            optimizer['sound'].step()  # <-- IPL001: steps parameters that loss_all_rest's graph still needs
            optimizer['sound'].zero_grad()
            optimizer['fusion'].step()  # <-- IPL001: steps parameters that loss_all_rest's graph still needs
            optimizer['fusion'].zero_grad()
            opt.aveGrad['sal'] = samples_rest['sal'].size(0)

        if (samples_rest['sal'].size(0)) > 0:
            loss_all_rest.backward()

        if (opt.aveGrad['global'] >= opt.batch_sizes['global']):
            optimizer['global'].step()
            optimizer['global'].zero_grad()
            opt.aveGrad['global'] = 0
    return loss_all


model = DAVE()
parameters = {
    'sal': list(model.visual.parameters()) + list(model.score_dsn.parameters()),
    'sound': list(model.sound.parameters()),
    'fusion': list(model.fusion.parameters()) + list(model.fuseav.parameters()),
}
parameters['global'] = parameters['sal'] + parameters['sound'] + parameters['fusion']
optimizer = {k: optim.SGD(v, lr=0.01, momentum=0.9) for k, v in parameters.items()}
opt = SimpleNamespace(sal_weights=[1.0], batch_sizes={'global': 5, 'sal': 5},
                      aveGrad={'global': 0, 'sal': 0})

data_loader = []
for _ in range(2):
    data = {'rgb': torch.randn(3, 3, 4, 4), 'audio': torch.randn(3, 10)}
    targets = {'salmap': torch.rand(3, 1, 4, 4)}
    valid = {'sal': torch.ones(3)}
    data_loader.append((data, targets, valid))

loss_all = train_epoch(data_loader, model, optimizer, opt, epoch=1, nEpochs=10)
