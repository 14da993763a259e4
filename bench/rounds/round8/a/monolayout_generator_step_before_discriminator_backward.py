# label: hazard raises no-twin
# why: run_epoch steps the encoder/decoder optimizer right after loss_G.backward(retain_graph=True), but loss_D was computed from the non-detached decoder output, so loss_D.backward() then needs decoder weights the step has already changed in place.
# source: https://github.com/manila95/monolayout/issues/6
import torch
import torch.nn as nn

torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(), nn.Conv2d(8, 8, 3, 2, 1), nn.ReLU())

    def forward(self, x):
        return self.conv(x)


class Decoder(nn.Module):
    def __init__(self, num_out_ch=2):
        super().__init__()
        self.convs = nn.ModuleDict(
            {
                "upconv": nn.ConvTranspose2d(8, 4, 4, 2, 1),
                "topview": nn.Conv2d(4, num_out_ch, 3, 1, 1),
            }
        )

    def forward(self, x):
        x = torch.relu(self.convs["upconv"](x))
        return self.convs["topview"](x)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Conv2d(2, 4, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(4, 1, 2), nn.Sigmoid())

    def forward(self, x):
        return self.main(x)


class Trainer:
    def __init__(self):
        self.device = "cpu"
        self.epoch = 2
        self.discr_train_epoch = 1
        self.lambda_D = 0.01
        self.models = {"encoder": Encoder(), "decoder": Decoder(), "discriminator": Discriminator()}
        self.parameters_to_train = list(self.models["encoder"].parameters()) + list(self.models["decoder"].parameters())
        self.model_optimizer = torch.optim.Adam(self.parameters_to_train, 1e-3)
        self.model_optimizer_D = torch.optim.Adam(self.models["discriminator"].parameters(), 1e-3)
        self.criterion_d = nn.BCEWithLogitsLoss()
        self.valid = torch.ones(2, 1, 1, 1)
        self.fake = torch.zeros(2, 1, 1, 1)

    def process_batch(self, inputs):
        outputs = {}
        for key, inpt in inputs.items():
            inputs[key] = inpt.to(self.device)
        features = self.models["encoder"](inputs["color"])
        outputs["topview"] = self.models["decoder"](features)
        losses = self.compute_losses(inputs, outputs)
        losses["loss_discr"] = torch.zeros(1)
        return outputs, losses

    def compute_losses(self, inputs, outputs):
        losses = {}
        true_top_view = torch.squeeze(inputs["static"].long(), 1)
        loss = nn.CrossEntropyLoss(weight=torch.Tensor([1.0, 5.0]))
        losses["loss"] = loss(outputs["topview"], true_top_view).mean()
        return losses

    def run_epoch(self, batches):
        loss = {"loss": 0.0, "loss_discr": 0.0}
        for batch_idx, inputs in enumerate(batches):
            outputs, losses = self.process_batch(inputs)
            self.model_optimizer.zero_grad()
            fake_pred = self.models["discriminator"](outputs["topview"])
            real_pred = self.models["discriminator"](inputs["discr"].float())
            loss_GAN = self.criterion_d(fake_pred, self.valid)
            loss_D = self.criterion_d(fake_pred, self.fake) + self.criterion_d(real_pred, self.valid)
            loss_G = self.lambda_D * loss_GAN + losses["loss"]

            # Train Discriminator
            if self.epoch > self.discr_train_epoch:
                loss_G.backward(retain_graph=True)
                self.model_optimizer.step()  # <-- IPL001: decoder weights change before loss_D backprops through the decoder output
                self.model_optimizer_D.zero_grad()
                loss_D.backward()
                self.model_optimizer_D.step()
            else:
                losses["loss"].backward()
                self.model_optimizer.step()
            loss["loss"] += losses["loss"].item()
            loss["loss_discr"] += loss_D.item()
        return loss


trainer = Trainer()
batches = [
    {
        "color": torch.rand(2, 3, 8, 8),
        "static": torch.randint(0, 2, (2, 1, 4, 4)),
        "discr": torch.rand(2, 2, 4, 4),
    }
]
epoch_loss = trainer.run_epoch(batches)
