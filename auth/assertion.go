package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// clientAssertionType is RFC 7523's client assertion type.
const clientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// parseSigningKey reads a PEM private key (PKCS#8, SEC 1 EC or PKCS#1 RSA)
// and the JWS algorithm to sign with: alg when given (checked against the
// key), else the key's natural one.
func parseSigningKey(pemBytes []byte, alg string) (crypto.Signer, jose.SignatureAlgorithm, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, "", errors.New("the private key file is not PEM")
	}
	var key any
	var err error
	if key, err = x509.ParsePKCS8PrivateKey(block.Bytes); err != nil {
		if key, err = x509.ParseECPrivateKey(block.Bytes); err != nil {
			if key, err = x509.ParsePKCS1PrivateKey(block.Bytes); err != nil {
				return nil, "", errors.New("the private key file holds no PKCS#8, EC or RSA private key")
			}
		}
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, "", errors.New("the private key cannot sign")
	}
	var natural []jose.SignatureAlgorithm
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve.Params().BitSize {
		case 256:
			natural = []jose.SignatureAlgorithm{jose.ES256}
		case 384:
			natural = []jose.SignatureAlgorithm{jose.ES384}
		case 521:
			natural = []jose.SignatureAlgorithm{jose.ES512}
		}
	case *rsa.PrivateKey:
		natural = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512}
	case ed25519.PrivateKey:
		natural = []jose.SignatureAlgorithm{jose.EdDSA}
	}
	if len(natural) == 0 {
		return nil, "", errors.New("the private key's type is not supported (EC P-256/384/521, RSA or Ed25519)")
	}
	if alg == "" {
		return signer, natural[0], nil
	}
	for _, a := range natural {
		if strings.EqualFold(string(a), alg) {
			return signer, a, nil
		}
	}
	return nil, "", fmt.Errorf("the signing algorithm %s does not fit the private key", alg)
}

// clientAssertion signs a private_key_jwt client assertion (RFC 7523):
// iss = sub = the client id, aud = the authorization server's issuer,
// valid for 5 minutes from now, with a unique jti.
func clientAssertion(s Settings, clientID, audience string, now time.Time, jti string) (string, error) {
	key, alg, err := parseSigningKey(s.PrivateKeyPEM, s.SigningAlg)
	if err != nil {
		return "", err
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", fmt.Errorf("cannot sign with the private key: %s", alg)
	}
	claims := jwt.Claims{
		Issuer: clientID, Subject: clientID, Audience: jwt.Audience{audience}, ID: jti,
		IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now.Add(-30 * time.Second)),
		Expiry: jwt.NewNumericDate(now.Add(5 * time.Minute)),
	}
	out, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		return "", errors.New("cannot sign the client assertion")
	}
	return out, nil
}
