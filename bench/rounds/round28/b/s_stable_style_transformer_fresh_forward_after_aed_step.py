# label: safe no-twin
# why: the generator-classification loss is computed from a fresh decoder forward run after aed_trainer.step(), so the graph it backpropagates through saved the already-updated weights and no saved tensor is modified afterwards.
# source: https://github.com/rungjoo/Stable-Style-Transformer/issues/9
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)

VOCAB = 40
EMB = 16
HID = 16


class styletransfer(nn.Module):
    def __init__(self):
        super(styletransfer, self).__init__()
        self.emb_matrix = nn.Embedding(VOCAB, EMB)
        self.enc_gru = nn.GRU(EMB, HID, batch_first=True)
        self.att_linear = nn.Linear(2, HID)
        self.dec_gru = nn.GRU(EMB, HID, batch_first=True)
        self.matrix_A = nn.Linear(HID, VOCAB)
        self.aed_params = list(self.parameters())

    def encoder(self, del_idx):
        _, enc_out = self.enc_gru(self.emb_matrix(del_idx))
        return enc_out

    def decoder(self, enc_out, token_idx, attribute):
        h0 = enc_out + self.att_linear(attribute).unsqueeze(0)
        dec_out, _ = self.dec_gru(self.emb_matrix(token_idx), h0)
        vocab_out = self.matrix_A(dec_out)
        return dec_out, vocab_out

    def recon_loss(self, token_idx, vocab_out):
        return F.cross_entropy(vocab_out[:, :-1].reshape(-1, VOCAB), token_idx[:, 1:].reshape(-1))

    def cls_loss(self, attribute, gen_cls_out):
        return F.binary_cross_entropy_with_logits(gen_cls_out, attribute)


class findattribute(nn.Module):
    def __init__(self):
        super(findattribute, self).__init__()
        self.word_emb = nn.Embedding(VOCAB, EMB)
        self.conv = nn.Conv1d(EMB, 8, 3, padding=1)
        self.fc = nn.Linear(8, 2)

    def gen_discriminator(self, vocab_out):
        soft_tokens = F.softmax(vocab_out, dim=-1) @ self.word_emb.weight
        feat = F.relu(self.conv(soft_tokens.transpose(1, 2))).max(dim=-1).values
        return self.fc(feat)


def main():
    genmodel = styletransfer()
    dismodel = findattribute()
    dismodel.eval()
    for p in dismodel.parameters():
        p.requires_grad_(False)
    aed_trainer = optim.Adamax(genmodel.aed_params, lr=0.00001)
    gen_trainer = optim.Adamax(genmodel.aed_params, lr=0.001)
    max_grad_norm = 20

    token_idx = torch.randint(0, VOCAB, (1, 7))
    del_idx = token_idx[:, :4]
    attribute = torch.tensor([[0.0, 1.0]])

    enc_out = genmodel.encoder(del_idx)
    dec_out, vocab_out = genmodel.decoder(enc_out, token_idx, attribute)
    recon_loss = genmodel.recon_loss(token_idx, vocab_out)

    aed_trainer.zero_grad()
    recon_loss.backward()
    torch.nn.utils.clip_grad_norm_(genmodel.aed_params, max_grad_norm)
    aed_trainer.step()

    enc_out = genmodel.encoder(del_idx)
    dec_out, vocab_out = genmodel.decoder(enc_out, token_idx, attribute)
    gen_cls_out = dismodel.gen_discriminator(vocab_out)
    gen_cls_loss = genmodel.cls_loss(attribute, gen_cls_out)
    gen_trainer.zero_grad()
    gen_cls_loss.backward()
    torch.nn.utils.clip_grad_norm_(genmodel.aed_params, max_grad_norm)
    gen_trainer.step()
    return recon_loss.detach(), gen_cls_loss.detach()


recon_loss, gen_cls_loss = main()
